import { applyDecorators, Injectable, UseGuards } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ApiError } from '../../common/errors/api-error';
import { UserRateLimitGuard } from '../../common/rate-limit/user-rate-limit.guard';
import { AuthenticatedUser } from './authenticated-user';
import { USER_JWT } from './user-jwt.strategy';

/** Authenticates user API requests; failures become `401 UNAUTHORIZED` with a reason. */
@Injectable()
export class UserAuthGuard extends AuthGuard(USER_JWT) {
  override handleRequest<T = AuthenticatedUser>(error: unknown, user: T | false, info: unknown): T {
    // Not only ApiErrors: a failed session lookup (database down) must surface as an outage, not as a bad token.
    // No `instanceof Error`: errors made by Node's own modules fail it across realms (Jest's vm context).
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- whatever the strategy threw, unchanged
    if (error) throw error;
    if (user) return user;
    const reason = info instanceof Error ? info.message : '';
    if (/expired/i.test(reason)) throw new ApiError('UNAUTHORIZED', 'The access token has expired; log in again');
    if (/no auth token/i.test(reason))
      throw new ApiError('UNAUTHORIZED', 'Missing bearer token in the Authorization header', { 'WWW-Authenticate': 'Bearer' });
    throw new ApiError('UNAUTHORIZED', 'The bearer token is not valid');
  }
}

/** Marks a controller or route as user API: bearer authentication, then the per-user rate limit. */
export const UserApi = () => applyDecorators(UseGuards(UserAuthGuard, UserRateLimitGuard), ApiBearerAuth());
