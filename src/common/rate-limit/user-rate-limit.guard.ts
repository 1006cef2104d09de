import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error';
import { RateDecision, RateLimits, Tier } from './rate-limits.service';

/** Sets the `X-RateLimit-*` headers on the reply; refusals add `Retry-After`. */
export function applyRateHeaders(reply: FastifyReply, decision: RateDecision): void {
  void reply.header('X-RateLimit-Limit', String(decision.limit));
  void reply.header('X-RateLimit-Remaining', String(decision.remaining));
  void reply.header('X-RateLimit-Reset', String(decision.resetAt));
}

/**
 * Reports `decision` unless the reply already reports a window with fewer
 * requests left (a route under two limits shows the one that refuses first);
 * a refusal is always reported.
 */
export function applyTighterRateHeaders(reply: FastifyReply, decision: RateDecision): void {
  // No header yet reads as NaN, which is never <= anything: the decision is reported.
  const reported = Number(reply.getHeader('x-ratelimit-remaining'));
  if (!decision.allowed || !(reported <= decision.remaining)) applyRateHeaders(reply, decision);
}

function refuse(decision: RateDecision): never {
  throw new ApiError('RATE_LIMITED', `Rate limit of ${decision.limit} requests exceeded; retry in ${decision.retryAfter} s`, {
    'Retry-After': String(decision.retryAfter),
  });
}

/** Per-user, per-tier limit of the user API. Runs after authentication. */
@Injectable()
export class UserRateLimitGuard implements CanActivate {
  constructor(private readonly limits: RateLimits) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest & { user: { id: string; tier: Tier } }>();
    const decision = await this.limits.consumeForUser(request.user.id, request.user.tier);
    applyRateHeaders(http.getResponse<FastifyReply>(), decision);
    if (!decision.allowed) refuse(decision);
    return true;
  }
}

/** Per-address limit for unauthenticated user API calls (login). */
@Injectable()
export class AddressRateLimitGuard implements CanActivate {
  constructor(private readonly limits: RateLimits) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const decision = await this.limits.consumeForAddress(http.getRequest<FastifyRequest>().ip);
    applyRateHeaders(http.getResponse<FastifyReply>(), decision);
    if (!decision.allowed) refuse(decision);
    return true;
  }
}
