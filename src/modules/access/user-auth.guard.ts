import { applyDecorators, ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ApiError } from '../../common/errors/api-error';
import { UserRateLimitGuard } from '../../common/rate-limit/user-rate-limit.guard';
import { AccessTokens } from './access-tokens';
import { AuthenticatedUser } from './authenticated-user';
import { SessionCache } from './session-cache';
import { USER_JWT } from './user-jwt.strategy';

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^\s*(\S+)\s+(\S+)\s*$/.exec(header ?? '');
  return match && match[1].toLowerCase() === 'bearer' ? match[2] : undefined;
}

/**
 * Authenticates user API requests: a valid service access token whose session
 * is live and whose user still exists. A token this process verified before is
 * recalled (until its `exp`) and only its session is checked; any other goes
 * through passport-jwt (UserJwtStrategy). Failures become `401 UNAUTHORIZED`
 * with a reason; a failing session lookup (database down) stays an outage (503),
 * never a bad token. Sets `request.user`.
 */
@Injectable()
export class UserAuthGuard extends AuthGuard(USER_JWT) {
  constructor(
    private readonly tokens: AccessTokens,
    private readonly sessions: SessionCache,
  ) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined>; user?: AuthenticatedUser }>();
    const token = bearerToken(request.headers.authorization);
    if (!token) throw new ApiError('UNAUTHORIZED', 'Missing bearer token in the Authorization header', { 'WWW-Authenticate': 'Bearer' });
    const known = this.tokens.recall(token);
    if (!known) return (await super.canActivate(context)) as boolean;
    const user = await this.sessions.resolve(known.sub, known.sid);
    if (!user) throw new ApiError('UNAUTHORIZED', 'The session of this token has ended; log in again');
    request.user = user;
    return true;
  }

  override handleRequest<T = AuthenticatedUser>(error: unknown, user: T | false, info: unknown): T {
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
