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

/** Reports `decision` on the reply and lets the request through, or refuses it. */
function admit(reply: FastifyReply, decision: RateDecision): true {
  applyRateHeaders(reply, decision);
  if (!decision.allowed) refuse(decision);
  return true;
}

/**
 * Per-user, per-tier limit of the user API. Runs after authentication. A
 * request counted from this process's lease is answered without a promise
 * (Nest's guard consumer takes a plain boolean as it is), the others after
 * the round trip to the shared counters.
 */
@Injectable()
export class UserRateLimitGuard implements CanActivate {
  constructor(private readonly limits: RateLimits) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const http = context.switchToHttp();
    const { user } = http.getRequest<FastifyRequest & { user: { id: string; tier: Tier } }>();
    const reply = http.getResponse<FastifyReply>();
    const leased = this.limits.consumeLeasedForUser(user.id, user.tier);
    if (leased) return admit(reply, leased);
    return this.limits.consumeForUser(user.id, user.tier).then((decision) => admit(reply, decision));
  }
}

/** Per-address limit for unauthenticated user API calls (login). */
@Injectable()
export class AddressRateLimitGuard implements CanActivate {
  constructor(private readonly limits: RateLimits) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    return admit(http.getResponse<FastifyReply>(), await this.limits.consumeForAddress(http.getRequest<FastifyRequest>().ip));
  }
}
