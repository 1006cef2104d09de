import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { PlatformScope } from '../scopes';

/** Who is calling the provider platform. */
export type PlatformPrincipal =
  | { kind: 'developer'; developerId: string; sessionId: string }
  | {
      kind: 'app';
      developerId: string;
      appId: string;
      /** The scopes the token carries that the app still holds. */
      scopes: string[];
      /** A token a user's install delegated acts for that install only. */
      delegation?: { userId: string; installId: string };
    };

export interface PlatformRouteOptions {
  /** Scope an app token must carry; developer console tokens act for their owner and hold every scope. */
  scope?: PlatformScope;
  /** Whether the developer's email must be verified first (default true). */
  verifiedEmail?: boolean;
  /** Which token kinds may call the route (default both). */
  principals?: Array<PlatformPrincipal['kind']>;
  /** Whether a token delegated by a user's install may call the route (default false: only execution acts for a user). */
  delegated?: boolean;
}

export const PLATFORM_ROUTE = Symbol('PLATFORM_ROUTE');

export const Principal = createParamDecorator((_data: unknown, context: ExecutionContext): PlatformPrincipal => {
  return context.switchToHttp().getRequest<{ principal: PlatformPrincipal }>().principal;
});

export const platformRouteOptions = (options: PlatformRouteOptions) => SetMetadata(PLATFORM_ROUTE, options);
