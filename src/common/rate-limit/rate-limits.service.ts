import { Inject, Injectable, Logger } from '@nestjs/common';
import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { REDIS } from '../../infra/redis/redis.module';
import { hashTag, type RedisClient } from '../../infra/redis/redis-client';
import { DEFAULT_LEASE_OPTIONS, RateLeases, Reservation, WindowCount } from './rate-leases';

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
 * One fixed window of a rule, counted in Redis under `<keyPrefix>:{<key>}`: the key hash-tagged, so the windows of
 * one rule for one key share a Redis Cluster slot and one script counts them all (see `windowKey`).
 */
interface CountedWindow extends Window {
  name: string;
  keyPrefix: string;
  /** Counts in this process alone while Redis cannot be reached. */
  insurance: RateLimiterMemory;
}

/**
 * Below this many requests left in a window, every request is counted on its
 * own: a block reserved by one instance could otherwise make another refuse a
 * request the window still has room for. Above it, a block takes at most a
 * quarter of the room over this floor.
 */
export const EXACT_BELOW = 256;

/**
 * Counts up to ARGV[1] requests in every window of a rule in one round trip
 * (ARGV[2i], ARGV[2i+1]: window i's duration and points): per window, the
 * counter is created with its expiry if missing; the count is the number
 * wanted, cut to a quarter of what the fullest window has left above
 * EXACT_BELOW (the last ARGV), and never below one (a refused request counts
 * too); each counter is incremented by it and its remaining lifetime read
 * (what rate-limiter-flexible's script does for one). Returns the count, then
 * consumed and pttl for each key in turn.
 */
const RESERVE_WINDOWS_LUA = `
local wanted = tonumber(ARGV[1])
local exactBelow = tonumber(ARGV[2 * #KEYS + 2])
for i, key in ipairs(KEYS) do
  redis.call('set', key, 0, 'EX', tonumber(ARGV[2 * i]), 'NX')
  local spare = math.floor((tonumber(ARGV[2 * i + 1]) - tonumber(redis.call('get', key)) - exactBelow) / 4)
  if spare < wanted then wanted = spare end
end
if wanted < 1 then wanted = 1 end
local out = { wanted }
for i, key in ipairs(KEYS) do
  local duration = tonumber(ARGV[2 * i])
  local consumed = redis.call('incrby', key, wanted)
  local ttl = redis.call('pttl', key)
  if ttl == -1 then
    redis.call('expire', key, duration)
    ttl = 1000 * duration
  end
  out[2 * i] = consumed
  out[2 * i + 1] = ttl
end
return out`;

/** Uncounts ARGV[1] requests in each window that still has its counter (a reservation's unused points). */
const GIVE_BACK_LUA = `
for _, key in ipairs(KEYS) do
  if redis.call('pttl', key) > 0 then redis.call('decrby', key, tonumber(ARGV[1])) end
end
return 0`;

/** Redis key of one window's counter for one key (user, app, address). */
const windowKey = (w: CountedWindow, key: string): string => `${w.keyPrefix}:${hashTag(key)}`;

type WindowCounter = RedisClient & {
  reserveRateWindows(keyCount: number, ...keysThenArgs: Array<string | number>): Promise<number[]>;
  giveBackRateWindows(keyCount: number, ...keysThenPoints: Array<string | number>): Promise<number>;
};

/**
 * Fixed-window counters in Redis, atomic across api instances; the windows of
 * one rule (minute and day, burst and sustained) are counted by one script in
 * one round trip. A key this instance sees many requests of at once reserves
 * a block of them in that round trip (`RateLeases`): still counted in Redis
 * before each is answered, never beyond the limit, and only while the window
 * has room to spare (`EXACT_BELOW`). If Redis is unreachable
 * each instance falls back to an in-memory limiter with the same rules rather
 * than failing every request.
 */
@Injectable()
export class RateLimits {
  private readonly tiers: Record<Tier, CountedWindow[]>;
  private readonly address: CountedWindow[];
  private readonly platform: CountedWindow[];
  private readonly redis: WindowCounter;

  private readonly make: (name: string, window: Window) => RateLimiterAbstract;
  private readonly custom = new Map<string, RateLimiterAbstract>();
  private readonly perKey = new Map<string, CountedWindow>();
  private readonly window: (rule: string, name: string, w: Window) => CountedWindow;
  private readonly logger = new Logger(RateLimits.name);
  private readonly leases = new RateLeases({
    ...DEFAULT_LEASE_OPTIONS,
    onGiveBackError: (error: unknown) => this.logger.warn({ err: error }, 'rate limit: unused reserved requests not given back'),
  });

  constructor(@Inject(REDIS) redis: RedisClient, @Inject(APP_CONFIG) config: AppConfig) {
    if (!('reserveRateWindows' in redis)) {
      redis.defineCommand('reserveRateWindows', { lua: RESERVE_WINDOWS_LUA });
      redis.defineCommand('giveBackRateWindows', { lua: GIVE_BACK_LUA });
    }
    this.redis = redis as WindowCounter;
    const window = (this.window = (rule: string, name: string, w: Window): CountedWindow => ({
      ...w,
      name,
      keyPrefix: `${config.redisPrefix}:rl:${rule}`,
      insurance: new RateLimiterMemory({ points: w.points, duration: w.duration }),
    }));
    const windows = tierWindows(config);
    const userWindow = (rule: string) => (w: Window, i: number) => window(`${rule}:${i}`, ['minute', 'day'][i], w);
    this.tiers = {
      free: windows.free.map(userWindow('free')),
      pro: windows.pro.map(userWindow('pro')),
      enterprise: windows.enterprise.map(userWindow('ent')),
    };
    this.address = [window('addr', 'minute', { points: config.anonymousPerMinute, duration: 60 })];
    this.platform = platformWindows(config).map((w, i) => window(`plat:${i}`, ['burst', 'sustained'][i], w));
    this.make = (name: string, w: Window) =>
      new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${config.redisPrefix}:rl:${name}`,
        points: w.points,
        duration: w.duration,
        insuranceLimiter: new RateLimiterMemory({ points: w.points, duration: w.duration }),
      });
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
    return this.consume(this.tiers[tier], userId);
  }

  /**
   * As `consumeForUser`, answered at once when this process holds a lease on
   * the user's windows with points left (a user sending many requests):
   * counted without a round trip or a promise. Undefined otherwise, with
   * nothing counted; then call `consumeForUser`.
   */
  consumeLeasedForUser(userId: string, tier: Tier): RateDecision | undefined {
    return this.consumeLeased(this.tiers[tier], userId);
  }

  consumeForAddress(address: string): Promise<RateDecision> {
    return this.consume(this.address, address);
  }

  /**
   * What the per-address window says now, without counting a request: the
   * headers of an answer given before any limiter ran (a malformed request, an
   * unknown route, a refused token), which did no work worth counting.
   */
  async peekForAddress(address: string): Promise<RateDecision> {
    const [w] = this.address;
    let consumed = 0;
    let msBeforeNext = w.duration * 1000;
    try {
      const [[, count], [, ttl]] = (await this.redis.multi().get(windowKey(w, address)).pttl(windowKey(w, address)).exec()) as [
        [unknown, string | null],
        [unknown, number],
      ];
      consumed = Number(count ?? 0);
      if (ttl > 0) msBeforeNext = ttl;
    } catch {
      const known = await w.insurance.get(address);
      if (known) ({ consumedPoints: consumed, msBeforeNext } = known);
    }
    return {
      allowed: consumed < w.points,
      window: w.name,
      limit: w.points,
      remaining: Math.max(0, w.points - consumed),
      resetAt: Math.ceil((Date.now() + msBeforeNext) / 1000),
      retryAfter: Math.max(1, Math.ceil(msBeforeNext / 1000)),
    };
  }

  /**
   * One fixed window of a rule whose size depends on the key (a tier), counted
   * in Redis across instances like the others, with the same headers. The
   * counter is named by the rule and key only, so a key moved to another size
   * (an app changing tier) keeps what it has used in the current window.
   */
  consumeWindow(rule: string, key: string, points: number, durationSeconds: number): Promise<RateDecision> {
    const id = `${rule}:${points}:${durationSeconds}`;
    let window = this.perKey.get(id);
    if (!window) {
      window = this.window(`w:${rule}`, rule, { points, duration: durationSeconds });
      this.perKey.set(id, window);
    }
    return this.consume([window], key);
  }

  /** Provider platform calls, keyed by app id (app tokens) or developer id (console tokens). */
  consumeForPlatform(key: string): Promise<RateDecision> {
    return this.consume(this.platform, key);
  }

  /**
   * Counts against every window (through a lease or a round trip) and decides
   * (see `decide`).
   */
  private async consume(windows: CountedWindow[], key: string): Promise<RateDecision> {
    return decide(windows, await this.count(windows, key));
  }

  private consumeLeased(windows: CountedWindow[], key: string): RateDecision | undefined {
    const counted = this.leases.takeLeased(leaseId(windows.map((w) => windowKey(w, key))));
    return counted && decide(windows, counted);
  }

  private async count(windows: CountedWindow[], key: string): Promise<WindowCount[]> {
    const keys = windows.map((w) => windowKey(w, key));
    try {
      return await this.leases.take(leaseId(keys), {
        reserve: async (wanted: number): Promise<Reservation> => {
          const reply = await this.redis.reserveRateWindows(
            keys.length,
            ...keys,
            wanted,
            ...windows.flatMap((w) => [w.duration, w.points]),
            EXACT_BELOW,
          );
          return {
            reserved: Number(reply[0]),
            windows: windows.map((_w, i) => ({ consumed: Number(reply[2 * i + 1]), msBeforeNext: Number(reply[2 * i + 2]) })),
          };
        },
        giveBack: async (points: number, indexes: number[]) => {
          await this.redis.giveBackRateWindows(indexes.length, ...indexes.map((i) => keys[i]), points);
        },
      });
    } catch {
      // Redis is away: count in this process (the Redis client reports the outage once).
      return Promise.all(
        windows.map(async (w) => {
          const result = await w.insurance.consume(key).catch((refusal: unknown) => {
            if (refusal instanceof RateLimiterRes) return refusal;
            throw refusal;
          });
          return { consumed: result.consumedPoints, msBeforeNext: result.msBeforeNext };
        }),
      );
    }
  }
}

/** A rule's windows for one key are leased together, under their Redis keys. */
const leaseId = (keys: string[]): string => keys.join(' ');

/**
 * The decision on a request counted in every window. A request refused by
 * one window still counts in the others, as with any fixed-window limiter
 * checked all at once; the refusal is what the caller sees. The headers
 * describe the window with the fewest requests left, which is the one that
 * will refuse first.
 */
function decide(windows: CountedWindow[], counted: WindowCount[]): RateDecision {
  const decisions: RateDecision[] = counted.map(({ consumed, msBeforeNext }, index) => ({
    allowed: consumed <= windows[index].points,
    window: windows[index].name,
    limit: windows[index].points,
    remaining: Math.max(0, windows[index].points - consumed),
    resetAt: Math.ceil((Date.now() + msBeforeNext) / 1000),
    retryAfter: Math.max(1, Math.ceil(msBeforeNext / 1000)),
  }));
  const refused = decisions.find((d) => !d.allowed);
  if (refused) return refused;
  return decisions.reduce((tightest, d) => (d.remaining < tightest.remaining ? d : tightest));
}
