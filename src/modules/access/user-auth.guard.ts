import { applyDecorators, ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ApiError } from '../../common/errors/api-error';
import { UserRateLimitGuard } from '../../common/rate-limit/user-rate-limit.guard';
import { AccessTokenClaims, AccessTokens } from './access-tokens';
import { AuthenticatedUser } from './authenticated-user';
import { SessionCache } from './session-cache';
import { USER_JWT } from './user-jwt.strategy';

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^\s*(\S+)\s+(\S+)\s*$/.exec(header ?? '');
  return match && match[1].toLowerCase() === 'bearer' ? match[2] : undefined;
}

type UserRequest = { headers: Record<string, string | undefined>; user?: AuthenticatedUser };

/**
 * Authenticates user API requests: a valid service access token whose session
 * is live and whose user still exists. A token this process verified before
 * is recalled (until its `exp`); any other goes through passport-jwt
 * (UserJwtStrategy), which answers its claims, and is remembered. The session
 * is then checked with this application's session cache, whichever
 * application's strategy instance passport used. Failures become
 * `401 UNAUTHORIZED` with a reason; a failing session lookup (database down)
 * stays an outage (503), never a bad token. Sets `request.user`. A recalled
 * token whose session check still stands (dropped as soon as anything changes
 * it: see `SessionCache`) is answered at once, without a promise.
 */
@Injectable()
export class UserAuthGuard extends AuthGuard(USER_JWT) {
  constructor(
    private readonly tokens: AccessTokens,
    private readonly sessions: SessionCache,
  ) {
    super();
  }

  override canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<UserRequest>();
    const token = bearerToken(request.headers.authorization);
    if (!token) throw new ApiError('UNAUTHORIZED', 'Missing bearer token in the Authorization header', { 'WWW-Authenticate': 'Bearer' });
    // The common case, a token verified before whose session was checked a moment ago, is answered without a promise.
    const claims = this.tokens.recall(token);
    const known = claims && this.sessions.recall(claims.sub, claims.sid);
    if (known) {
      request.user = known;
      return true;
    }
    return this.verify(context, request, token, claims);
  }

  private async verify(context: ExecutionContext, request: UserRequest, token: string, recalled?: AccessTokenClaims): Promise<boolean> {
    let claims = recalled;
    if (!claims) {
      await super.canActivate(context); // passport-jwt: the signature, issuer, audience and expiry; `request.user` = the claims
      claims = this.tokens.remember(token, request.user as unknown as AccessTokenClaims);
    }
    const user = await this.sessions.resolve(claims.sub, claims.sid);
    if (!user) throw new ApiError('UNAUTHORIZED', 'The session of this token has ended; log in again');
    request.user = user;
    return true;
  }

  override handleRequest<T = AccessTokenClaims>(error: unknown, user: T | false, info: unknown): T {
    // Whatever the strategy threw passes unchanged: an ApiError, or a database failure that must surface as an outage.
    // No `instanceof Error`: errors made by Node's own modules fail it across realms (Jest's vm context).
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- whatever the strategy threw, unchanged
    if (error) throw error;
    if (user) return user;
    const reason = info instanceof Error ? info.message : '';
    if (/expired/i.test(reason)) throw new ApiError('UNAUTHORIZED', 'The access token has expired; log in again');
    throw new ApiError('UNAUTHORIZED', 'The bearer token is not valid');
  }
}

/** Marks a controller or route as user API: bearer authentication, then the per-user rate limit. */
export const UserApi = () => applyDecorators(UseGuards(UserAuthGuard, UserRateLimitGuard), ApiBearerAuth());
