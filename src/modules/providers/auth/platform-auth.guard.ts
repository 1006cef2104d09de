import { applyDecorators, CanActivate, ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiBearerAuth } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ProblemError } from '../../../common/errors/problem-error';
import { RateLimits } from '../../../common/rate-limit/rate-limits.service';
import { applyRateHeaders } from '../../../common/rate-limit/user-rate-limit.guard';
import { DeveloperSessionsRepository } from '../developer-sessions.repository';
import { platformAccess, PlatformStanding } from './platform-access';
import { PlatformStandings } from './platform-standings';
import { PLATFORM_ROUTE, PlatformPrincipal, platformRouteOptions, PlatformRouteOptions } from './platform-principal';
import { PlatformClaims, PlatformTokens } from './platform-tokens';

/**
 * Authenticates provider platform calls (developer console tokens and app
 * tokens), then applies the route's rules in the order a caller can fix them:
 * suspended account, unverified email, token kind, missing scope.
 */
@Injectable()
export class PlatformAuthGuard implements CanActivate {
  constructor(
    private readonly tokens: PlatformTokens,
    private readonly reflector: Reflector,
    private readonly standings: PlatformStandings,
    private readonly developerSessions: DeveloperSessionsRepository,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest & { principal?: PlatformPrincipal }>();
    const options =
      this.reflector.getAllAndOverride<PlatformRouteOptions | undefined>(PLATFORM_ROUTE, [context.getHandler(), context.getClass()]) ?? {};
    const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(request.headers.authorization ?? '');
    if (!match)
      throw new ProblemError('invalid_token', 'Missing bearer token in the Authorization header', {}, { 'WWW-Authenticate': 'Bearer' });
    request.principal = await this.authenticate(match[1], options);
    return true;
  }

  /**
   * The principal a bearer token stands for under a route's rules, read now: a
   * long-lived stream (`soul dev`) asks again while it stays open, so a token
   * revoked, a developer suspended or a scope taken away ends it.
   */
  async authenticate(token: string, options: PlatformRouteOptions): Promise<PlatformPrincipal> {
    const claims = await this.tokens.verify(token);
    return platformAccess(claims, await this.standing(claims), options);
  }

  /**
   * What the token stands on: the developer, and the console session, or the app with its current scopes, the generation of the client secret
   * the token came through (a rotation without grace ends the old one's
   * tokens; with grace, when the grace ends) and, for a delegated token, its
   * install still active. No row: the token stands on nothing any more. Read
   * afresh on every call, except for app tokens that name no install, which
   * are remembered until a change is announced (`PlatformStandings`), so a
   * revocation holds on every instance at once.
   */
  private async standing(claims: PlatformClaims): Promise<PlatformStanding | undefined> {
    const row =
      claims.kind === 'developer'
        ? await this.developerSessions.standing(claims.developerId, claims.sessionId)
        : await this.standings.forApp(claims);
    return row ?? undefined;
  }
}

/** Per app (or per developer console) burst and sustained limits of the provider platform. */
@Injectable()
export class PlatformRateLimitGuard implements CanActivate {
  constructor(private readonly limits: RateLimits) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const principal = http.getRequest<{ principal: PlatformPrincipal }>().principal;
    const decision = await this.limits.consumeForPlatform(principal.kind === 'app' ? principal.appId : principal.developerId);
    applyRateHeaders(http.getResponse<FastifyReply>(), decision);
    if (!decision.allowed) {
      const burst = decision.window === 'burst';
      throw new ProblemError(
        burst ? 'burst_limit' : 'rate_limit_exceeded',
        burst
          ? `More than ${decision.limit} requests in one second; retry in 1 to 2 seconds`
          : `More than ${decision.limit} requests per minute; retry after ${decision.retryAfter} seconds`,
        {},
        { 'Retry-After': String(decision.retryAfter) },
      );
    }
    return true;
  }
}

/** Marks a provider platform route: bearer authentication, its rules, then rate limits. */
export const PlatformRoute = (options: PlatformRouteOptions = {}) =>
  applyDecorators(platformRouteOptions(options), UseGuards(PlatformAuthGuard, PlatformRateLimitGuard), ApiBearerAuth());
