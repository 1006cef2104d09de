import { CanActivate, createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import { decodeJwt } from 'jose';
import { RateLimits } from '../../common/rate-limit/rate-limits.service';
import { UserRateLimitGuard } from '../../common/rate-limit/user-rate-limit.guard';
import { UserAuthGuard } from '../access/user-auth.guard';
import { AuthenticatedUser } from '../access/authenticated-user';
import { PlatformAuthGuard, PlatformRateLimitGuard } from '../providers/auth/platform-auth.guard';
import { PlatformPrincipal } from '../providers/auth/platform-principal';
import { PLATFORM_AUDIENCE } from '../providers/auth/platform-tokens';
import type { CapabilityCaller } from './capability-executor.service';

/**
 * The execute route accepts two kinds of bearer: an app token (checked by the
 * platform guard with the route's `capabilities:execute` scope and platform
 * limits) or a signed-in user's token (user guard and per-user limits). The
 * token's audience picks the guard; each guard then verifies the token fully,
 * so the unverified peek only routes, it never authorises.
 */
@Injectable()
export class CapabilityCallerGuard implements CanActivate {
  private readonly userLimit: UserRateLimitGuard;

  constructor(
    private readonly userAuth: UserAuthGuard,
    private readonly platformAuth: PlatformAuthGuard,
    private readonly platformLimit: PlatformRateLimitGuard,
    limits: RateLimits,
  ) {
    this.userLimit = new UserRateLimitGuard(limits);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (token && audienceOf(token) === PLATFORM_AUDIENCE) {
      return (await this.platformAuth.canActivate(context)) && this.platformLimit.canActivate(context);
    }
    return (await this.userAuth.canActivate(context)) && this.userLimit.canActivate(context);
  }
}

function audienceOf(token: string): string | undefined {
  try {
    const aud = decodeJwt(token).aud;
    return Array.isArray(aud) ? aud[0] : aud;
  } catch {
    return undefined;
  }
}

/** The caller the guard above authenticated. */
export const Caller = createParamDecorator((_data: unknown, context: ExecutionContext): CapabilityCaller => {
  const request = context.switchToHttp().getRequest<{ principal?: PlatformPrincipal; user?: AuthenticatedUser }>();
  if (request.principal?.kind === 'app') return { kind: 'app', appId: request.principal.appId, delegation: request.principal.delegation };
  return { kind: 'user', userId: request.user!.id };
});
