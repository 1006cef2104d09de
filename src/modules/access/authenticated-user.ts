import { createParamDecorator, ExecutionContext } from '@nestjs/common';

/** Rate-limit tiers of service users (an operator moves a user between them). */
export const USER_TIERS = ['free', 'pro', 'enterprise'] as const;
export type UserTier = (typeof USER_TIERS)[number];

/** The profile fields `/v1/me` shows, read together with the session check. */
export interface UserProfile {
  name: string;
  email: string | null;
  createdAt: Date;
  /** null after the soul record was deleted. */
  soulId: string | null;
}

/** What a verified user access token resolves to; set on the request by the user auth guard. */
export interface AuthenticatedUser {
  id: string;
  sessionId: string;
  tier: UserTier;
  /** As of the session check of this request; shared with other requests, do not modify. */
  profile: UserProfile;
}

/** Injects the authenticated user into a controller method. */
export const CurrentUser = createParamDecorator((_data: unknown, context: ExecutionContext): AuthenticatedUser => {
  return context.switchToHttp().getRequest<{ user: AuthenticatedUser }>().user;
});
