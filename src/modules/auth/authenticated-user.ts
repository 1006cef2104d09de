import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { UserTier } from './entities/user.entity';

/** What a verified user access token resolves to; set on the request by the user auth guard. */
export interface AuthenticatedUser {
  id: string;
  sessionId: string;
  tier: UserTier;
}

/** Injects the authenticated user into a controller method. */
export const CurrentUser = createParamDecorator((_data: unknown, context: ExecutionContext): AuthenticatedUser => {
  return context.switchToHttp().getRequest<{ user: AuthenticatedUser }>().user;
});
