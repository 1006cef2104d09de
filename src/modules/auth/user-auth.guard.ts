import { applyDecorators, CanActivate, ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ApiError } from '../../common/errors/api-error';
import { UserRateLimitGuard } from '../../common/rate-limit/user-rate-limit.guard';
import { AccessTokens, InvalidAccessToken } from './access-tokens';
import { AuthenticatedUser } from './authenticated-user';
import { SessionCache } from './session-cache';

const REFUSALS: Record<InvalidAccessToken['reason'], string> = {
  malformed: 'Malformed bearer token',
  unknown_key: 'Bearer token was signed with an unknown key',
  expired: 'The access token has expired; log in again',
  claims: 'Bearer token lacks its claims',
  invalid: 'The bearer token is not valid',
};

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^\s*(\S+)\s+(\S+)\s*$/.exec(header ?? '');
  return match && match[1].toLowerCase() === 'bearer' ? match[2] : undefined;
}

/**
 * Authenticates user API requests: a valid service access token whose session
 * is live and whose user still exists. Failures become `401 UNAUTHORIZED` with
 * a reason. Sets `request.user`.
 */
@Injectable()
export class UserAuthGuard implements CanActivate {
  constructor(
    private readonly tokens: AccessTokens,
    private readonly sessions: SessionCache,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined>; user?: AuthenticatedUser }>();
    const token = bearerToken(request.headers.authorization);
    if (!token) throw new ApiError('UNAUTHORIZED', 'Missing bearer token in the Authorization header', { 'WWW-Authenticate': 'Bearer' });
    let claims: { sub: string; sid: string };
    try {
      claims = await this.tokens.verify(token);
    } catch (error) {
      if (error instanceof InvalidAccessToken) throw new ApiError('UNAUTHORIZED', REFUSALS[error.reason]);
      throw error;
    }
    const user = await this.sessions.resolve(claims.sub, claims.sid);
    if (!user) throw new ApiError('UNAUTHORIZED', 'The session of this token has ended; log in again');
    request.user = user;
    return true;
  }
}

/** Marks a controller or route as user API: bearer authentication, then the per-user rate limit. */
export const UserApi = () => applyDecorators(UseGuards(UserAuthGuard, UserRateLimitGuard), ApiBearerAuth());
