import { applyDecorators, CanActivate, ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiBearerAuth } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DataSource } from 'typeorm';
import { ProblemError } from '../../../common/errors/problem-error';
import { RateLimits } from '../../../common/rate-limit/rate-limits.service';
import { applyRateHeaders } from '../../../common/rate-limit/user-rate-limit.guard';
import { PLATFORM_ROUTE, PlatformPrincipal, platformRouteOptions, PlatformRouteOptions } from './platform-principal';
import { PlatformTokens } from './platform-tokens';

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
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest & { principal?: PlatformPrincipal }>();
    const options =
      this.reflector.getAllAndOverride<PlatformRouteOptions | undefined>(PLATFORM_ROUTE, [context.getHandler(), context.getClass()]) ?? {};
    const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(request.headers.authorization ?? '');
    if (!match)
      throw new ProblemError('invalid_token', 'Missing bearer token in the Authorization header', {}, { 'WWW-Authenticate': 'Bearer' });
    const claims = await this.tokens.verify(match[1]);

    const [developer]: Array<{ status: string; email_verified_at: Date | null }> = await this.dataSource.query(
      claims.kind === 'developer'
        ? `SELECT d.status, d.email_verified_at FROM developers d
             JOIN developer_sessions s ON s.developer_id = d.id AND s.id = $2 AND s.revoked_at IS NULL AND s.expires_at > now()
            WHERE d.id = $1`
        : `SELECT d.status, d.email_verified_at FROM developers d JOIN apps a ON a.developer_id = d.id AND a.id = $2 WHERE d.id = $1`,
      [claims.developerId, claims.kind === 'developer' ? claims.sessionId : claims.appId],
    );
    if (!developer)
      throw new ProblemError(
        'invalid_token',
        'The session or app behind this token no longer exists',
        {},
        { 'WWW-Authenticate': 'Bearer' },
      );
    if (developer.status === 'suspended')
      throw new ProblemError('account_suspended', 'This developer account is suspended; contact support to request reinstatement');
    if (options.verifiedEmail !== false && !developer.email_verified_at) {
      throw new ProblemError(
        'email_not_verified',
        'Verify the account email address first (see the link we sent, or POST /v1/providers/account/verify/resend)',
      );
    }
    const principals = options.principals ?? ['developer', 'app'];
    if (!principals.includes(claims.kind)) {
      throw new ProblemError(
        'insufficient_scope',
        claims.kind === 'app' ? 'This operation requires a developer console token' : 'This operation requires an app access token',
      );
    }
    if (options.scope && claims.kind === 'app' && !claims.scopes.includes(options.scope)) {
      throw new ProblemError('insufficient_scope', `This operation requires the ${options.scope} scope`, { required_scope: options.scope });
    }
    request.principal =
      claims.kind === 'developer'
        ? { kind: 'developer', developerId: claims.developerId, sessionId: claims.sessionId }
        : { kind: 'app', developerId: claims.developerId, appId: claims.appId, scopes: claims.scopes };
    return true;
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
