import { Inject, Injectable, Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { REDIS } from '../../infra/redis/redis.module';

export type Tier = 'free' | 'pro' | 'enterprise';

/** Outcome of counting one request: what the `X-RateLimit-*` headers report. */
export interface RateDecision {
  allowed: boolean;
  /** Which window refused: `minute`, `day`, `burst` or `sustained`. */
  window?: string;
  limit: number;
  remaining: number;
  /** Epoch seconds at which the reported window resets. */
  resetAt: number;
  /** Seconds to wait when refused. */
  retryAfter: number;
}

interface Window {
  points: number;
  duration: number;
}

/** Spec limits per tier: requests per minute and per day. */
function tierWindows(config: AppConfig): Record<Tier, [Window, Window]> {
  return {
    free: [
      { points: 60, duration: 60 },
      { points: 1_000, duration: 86_400 },
    ],
    pro: [
      { points: 300, duration: 60 },
      { points: 10_000, duration: 86_400 },
    ],
    enterprise: [
      { points: config.enterpriseLimits.perMinute, duration: 60 },
      { points: config.enterpriseLimits.perDay, duration: 86_400 },
    ],
  };
}

/** Provider platform, per app (or developer console): a burst window (10/s) and the standard tier (600/min). */
function platformWindows(config: AppConfig): Window[] {
  return [
    { points: config.platformLimits.burstPerSecond, duration: 1 },
    { points: config.platformLimits.perMinute, duration: 60 },
  ];
}

/**
 * Fixed-window counters in Redis (rate-limiter-flexible), atomic across api
 * instances. If Redis is unreachable each instance falls back to an in-memory
 * limiter with the same rules rather than failing every request.
 */
@Injectable()
export class RateLimits {
  private readonly logger = new Logger(RateLimits.name);
  private readonly tiers: Record<Tier, RateLimiterAbstract[]>;
  private readonly address: RateLimiterAbstract;
  private readonly platform: RateLimiterAbstract[];

  private readonly make: (name: string, window: Window) => RateLimiterAbstract;
  private readonly custom = new Map<string, RateLimiterAbstract>();

  constructor(@Inject(REDIS) redis: Redis, @Inject(APP_CONFIG) config: AppConfig) {
    const make = (name: string, window: Window) =>
      new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${config.redisPrefix}:rl:${name}`,
        points: window.points,
        duration: window.duration,
        insuranceLimiter: new RateLimiterMemory({ points: window.points, duration: window.duration }),
      });
    const windows = tierWindows(config);
    this.tiers = {
      free: windows.free.map((w, i) => make(`free:${i}`, w)),
      pro: windows.pro.map((w, i) => make(`pro:${i}`, w)),
      enterprise: windows.enterprise.map((w, i) => make(`ent:${i}`, w)),
    };
    this.address = make('addr', { points: config.anonymousPerMinute, duration: 60 });
    this.platform = platformWindows(config).map((w, i) => make(`plat:${i}`, w));
    this.make = make;
  }

  /** A named limiter for a special rule (login failures, resend of a link), created once and shared. */
  limiter(name: string, points: number, durationSeconds: number): RateLimiterAbstract {
    const key = `${name}:${points}:${durationSeconds}`;
    let limiter = this.custom.get(key);
    if (!limiter) {
      limiter = this.make(`x:${name}`, { points, duration: durationSeconds });
      this.custom.set(key, limiter);
    }
    return limiter;
  }

  consumeForUser(userId: string, tier: Tier): Promise<RateDecision> {
    return this.consume(this.tiers[tier], userId, ['minute', 'day']);
  }

  consumeForAddress(address: string): Promise<RateDecision> {
    return this.consume([this.address], address, ['minute']);
  }

  /** Provider platform calls, keyed by app id (app tokens) or developer id (console tokens). */
  consumeForPlatform(key: string): Promise<RateDecision> {
    return this.consume(this.platform, key, ['burst', 'sustained']);
  }

  /**
   * Counts against every window (minute, then day). The headers describe the
   * window with the fewest requests left, which is the one that will refuse first.
   */
  private async consume(limiters: RateLimiterAbstract[], key: string, names: string[]): Promise<RateDecision> {
    // All windows are counted at once (one Redis round trip of latency instead of one per window).
    // A request refused by one window still counts in the others, as with any fixed-window limiter
    // that is checked in parallel; the refusal is what the caller sees.
    const outcomes = await Promise.all(
      limiters.map(async (limiter) => {
        try {
          return { allowed: true, result: await limiter.consume(key) };
        } catch (rejection) {
          if (!(rejection instanceof RateLimiterRes)) {
            this.logger.error({ err: rejection }, 'rate limiter failed');
            throw rejection;
          }
          return { allowed: false, result: rejection };
        }
      }),
    );
    const decisions: RateDecision[] = outcomes.map(({ allowed, result }, index) => ({
      allowed,
      window: names[index],
      limit: limiters[index].points,
      remaining: Math.max(0, result.remainingPoints),
      resetAt: Math.ceil((Date.now() + result.msBeforeNext) / 1000),
      retryAfter: Math.max(1, Math.ceil(result.msBeforeNext / 1000)),
    }));
    const refused = decisions.find((d) => !d.allowed);
    if (refused) return refused;
    return decisions.reduce((tightest, d) => (d.remaining < tightest.remaining ? d : tightest));
  }
}
