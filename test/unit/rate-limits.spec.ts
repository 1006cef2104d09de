import { randomBytes } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import Redis from 'ioredis';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError } from '../../src/common/errors/api-error';
import { EXACT_BELOW, RateDecision, RateLimits } from '../../src/common/rate-limit/rate-limits.service';
import {
  AddressRateLimitGuard,
  applyRateHeaders,
  applyTighterRateHeaders,
  UserRateLimitGuard,
} from '../../src/common/rate-limit/user-rate-limit.guard';
import type { AppConfig } from '../../src/config/app-config';

/**
 * The fixed windows against the real Redis on 127.0.0.1:6379, under a prefix of
 * this file's own (deleted afterwards), and the in-memory fallback against a
 * client whose Redis is away.
 */
const PREFIX = `mut-rl-${randomBytes(6).toString('hex')}`;
const config = {
  redisPrefix: PREFIX,
  anonymousPerMinute: 3,
  platformLimits: { burstPerSecond: 3, perMinute: 5 },
  enterpriseLimits: { perMinute: 4, perDay: 6 },
} as AppConfig;

let redis: Redis;
let away: Redis;
let limits: RateLimits;
let offline: RateLimits;
let n = 0;
/** A key no other test counts under. */
const fresh = (label = 'k') => `${label}-${++n}-${randomBytes(3).toString('hex')}`;

beforeAll(() => {
  redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  // Port 1 on loopback: nothing listens, every command fails at once.
  away = new Redis({
    host: '127.0.0.1',
    port: 1,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  away.on('error', () => undefined);
});

// Built in each test, not once: StrykerJS activates a mutant per test, so code run in beforeAll would escape it.
beforeEach(() => {
  limits = new RateLimits(redis, config);
  offline = new RateLimits(away, config);
});

afterAll(async () => {
  const keys = await redis.keys(`${PREFIX}:*`);
  if (keys.length > 0) await redis.del(...keys);
  away.disconnect();
  await redis.quit();
});

/** Counts `times` requests one after another and returns every decision. */
async function repeat(times: number, consume: () => Promise<RateDecision>): Promise<RateDecision[]> {
  const decisions: RateDecision[] = [];
  for (let i = 0; i < times; i++) decisions.push(await consume());
  return decisions;
}

/**
 * Redis key of one window's counter: `<prefix>:rl:<rule>[:<window index>]:{<key>}`, the
 * key hash-tagged so the windows of one rule share a Redis Cluster slot.
 */
const counter = (rule: string, key: string) => `${PREFIX}:rl:${rule}:{${key}}`;

/**
 * Makes `key` hot: twelve requests sent at once, within one of the leases' 100 ms slices, so that the eighth
 * reserves a block and the ones after it spend from it. Answers how many requests were made.
 */
async function burst(limits: RateLimits, key: string): Promise<number> {
  await Promise.all(Array.from({ length: 12 }, () => limits.consumeForUser(key, 'enterprise')));
  return 12;
}

/** Seconds from now, as `resetAt` counts them, for a window with `ms` left. */
const nowPlus = (ms: number) => Math.ceil((Date.now() + ms) / 1000);

describe('rate-limit windows (Redis)', () => {
  describe('the limit edge', () => {
    it('allows the n-th request of a window and refuses the n+1-th, naming the window', async () => {
      const key = fresh();
      const decisions = await repeat(4, () => limits.consumeForAddress(key));
      expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
      ]);
      expect(decisions[3]).toMatchObject({ allowed: false, window: 'minute', limit: 3, remaining: 0 });
    });

    it('reports remaining 0, never negative, however far past the limit', async () => {
      const key = fresh();
      const decisions = await repeat(6, () => limits.consumeForAddress(key));
      expect(decisions.slice(3).every((d) => !d.allowed && d.remaining === 0)).toBe(true);
    });

    it('counts each key apart', async () => {
      const [a, b] = [fresh(), fresh()];
      await repeat(3, () => limits.consumeForAddress(a));
      expect(await limits.consumeForAddress(b)).toMatchObject({ allowed: true, remaining: 2 });
    });
  });

  describe('window timing', () => {
    it('reports a new window as resetting a minute from now and a retry after 60 s', async () => {
      const before = Date.now();
      const decision = await limits.consumeForAddress(fresh());
      expect(decision.retryAfter).toBe(60);
      expect(decision.resetAt).toBeGreaterThanOrEqual(Math.ceil((before + 59_000) / 1000));
      expect(decision.resetAt).toBeLessThanOrEqual(nowPlus(60_000));
    });

    it('reports the time left in the window, rounded up to the second', async () => {
      const key = fresh();
      await redis.set(counter('addr', key), 3, 'PX', 30_500);
      const before = Date.now();
      const decision = await limits.consumeForAddress(key);
      expect(decision).toMatchObject({ allowed: false, window: 'minute', limit: 3, remaining: 0, retryAfter: 31 });
      expect(decision.resetAt).toBeGreaterThanOrEqual(Math.ceil((before + 30_000) / 1000));
      expect(decision.resetAt).toBeLessThanOrEqual(nowPlus(30_500));
    });

    it('reports a retry after of at least 1 s when the window ends within the second', async () => {
      const key = fresh();
      await redis.set(counter('addr', key), 5, 'PX', 300);
      expect(await limits.consumeForAddress(key)).toMatchObject({ allowed: false, retryAfter: 1 });
    });

    it('counts in a window that lost its expiry and gives it back its full duration', async () => {
      const key = fresh();
      await redis.set(counter('addr', key), 1);
      const decision = await limits.consumeForAddress(key);
      expect(decision).toMatchObject({ allowed: true, remaining: 1, retryAfter: 60 });
      const ttl = await redis.pttl(counter('addr', key));
      expect(ttl).toBeGreaterThan(59_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
    });

    it('starts a window with the rule’s duration in Redis', async () => {
      const key = fresh();
      await limits.consumeForPlatform(key);
      expect(await redis.pttl(counter('plat:0', key))).toBeLessThanOrEqual(1_000);
      expect(await redis.pttl(counter('plat:0', key))).toBeGreaterThan(0);
      expect(await redis.pttl(counter('plat:1', key))).toBeGreaterThan(59_000);
    });
  });

  describe('user tiers (per minute and per day)', () => {
    it.each([
      ['free', 'free', 60, 1_000],
      ['pro', 'pro', 300, 10_000],
      ['enterprise', 'ent', 4, 6],
    ] as const)('%s: allows the per-minute limit and refuses the next in the minute window', async (tier, rule, perMinute, perDay) => {
      const user = fresh('usr');
      await redis.set(counter(`${rule}:0`, user), perMinute - 1, 'EX', 60);
      expect(await limits.consumeForUser(user, tier)).toMatchObject({ allowed: true, window: 'minute', limit: perMinute, remaining: 0 });
      expect(await limits.consumeForUser(user, tier)).toMatchObject({
        allowed: false,
        window: 'minute',
        limit: perMinute,
        remaining: 0,
        retryAfter: 60,
      });
      expect(await redis.get(counter(`${rule}:1`, user))).toBe('2');
      expect(perDay).toBeGreaterThan(perMinute);
    });

    it.each([
      ['free', 'free', 1_000],
      ['pro', 'pro', 10_000],
      ['enterprise', 'ent', 6],
    ] as const)('%s: refuses in the day window once the day is used up, with a retry after the day ends', async (tier, rule, perDay) => {
      const user = fresh('usr');
      await redis.set(counter(`${rule}:1`, user), perDay, 'EX', 86_400);
      const decision = await limits.consumeForUser(user, tier);
      expect(decision).toMatchObject({ allowed: false, window: 'day', limit: perDay, remaining: 0, retryAfter: 86_400 });
    });

    it('reports the minute window while it has fewer requests left than the day', async () => {
      const user = fresh('usr');
      expect(await limits.consumeForUser(user, 'enterprise')).toMatchObject({
        allowed: true,
        window: 'minute',
        limit: 4,
        remaining: 3,
        retryAfter: 60,
      });
    });

    it('reports the day window once it has fewer requests left than the minute', async () => {
      const user = fresh('usr');
      await redis.set(counter('ent:1', user), 4, 'EX', 86_400);
      expect(await limits.consumeForUser(user, 'enterprise')).toMatchObject({
        allowed: true,
        window: 'day',
        limit: 6,
        remaining: 1,
        retryAfter: 86_400,
      });
    });

    it('counts a tier’s users apart from the other tiers', async () => {
      const user = fresh('usr');
      await repeat(4, () => limits.consumeForUser(user, 'enterprise'));
      expect(await limits.consumeForUser(user, 'enterprise')).toMatchObject({ allowed: false });
      expect(await limits.consumeForUser(user, 'pro')).toMatchObject({ allowed: true, limit: 300, remaining: 299 });
    });
  });

  describe('provider platform (burst per second, sustained per minute)', () => {
    it('reports the burst window when it has fewer requests left', async () => {
      expect(await limits.consumeForPlatform(fresh('app'))).toMatchObject({
        allowed: true,
        window: 'burst',
        limit: 3,
        remaining: 2,
        retryAfter: 1,
      });
    });

    it('reports the sustained window when it has fewer requests left', async () => {
      const app = fresh('app');
      await redis.set(counter('plat:1', app), 3, 'EX', 60);
      expect(await limits.consumeForPlatform(app)).toMatchObject({
        allowed: true,
        window: 'sustained',
        limit: 5,
        remaining: 1,
        retryAfter: 60,
      });
    });

    it('reports the first window (burst) when both have as many requests left', async () => {
      const app = fresh('app');
      await redis.set(counter('plat:1', app), 2, 'EX', 60);
      expect(await limits.consumeForPlatform(app)).toMatchObject({ allowed: true, window: 'burst', limit: 3, remaining: 2 });
    });

    it('refuses the 4th request in a second with the burst window', async () => {
      const app = fresh('app');
      const decisions = await repeat(4, () => limits.consumeForPlatform(app));
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
      expect(decisions[3]).toMatchObject({ window: 'burst', limit: 3, remaining: 0, retryAfter: 1 });
    });

    it('refuses with the sustained window when the minute is used up, though the burst window has room', async () => {
      const app = fresh('app');
      await redis.set(counter('plat:1', app), 5, 'EX', 60);
      expect(await limits.consumeForPlatform(app)).toMatchObject({
        allowed: false,
        window: 'sustained',
        limit: 5,
        remaining: 0,
        retryAfter: 60,
      });
    });

    it('refuses with the first refusing window when both refuse', async () => {
      const app = fresh('app');
      await redis.set(counter('plat:0', app), 3, 'EX', 1);
      await redis.set(counter('plat:1', app), 5, 'EX', 60);
      expect(await limits.consumeForPlatform(app)).toMatchObject({ allowed: false, window: 'burst' });
    });

    it('refuses with the refusing window even when an earlier window is at its limit but allowed', async () => {
      const app = fresh('app');
      await redis.set(counter('plat:0', app), 2, 'EX', 1);
      await redis.set(counter('plat:1', app), 5, 'EX', 60);
      expect(await limits.consumeForPlatform(app)).toMatchObject({ allowed: false, window: 'sustained', limit: 5, remaining: 0 });
    });

    it('still counts a request refused by one window in the others', async () => {
      const app = fresh('app');
      await redis.set(counter('plat:0', app), 3, 'EX', 1);
      await limits.consumeForPlatform(app);
      expect(await redis.get(counter('plat:1', app))).toBe('1');
    });
  });

  describe('peekForAddress', () => {
    it('reports the address window without counting a request', async () => {
      const key = fresh();
      await limits.consumeForAddress(key);
      const peeked = await limits.peekForAddress(key);
      expect(peeked).toMatchObject({ allowed: true, window: 'minute', limit: 3, remaining: 2, retryAfter: 60 });
      expect(await limits.peekForAddress(key)).toMatchObject({ remaining: 2 });
      expect(await redis.get(counter('addr', key))).toBe('1');
    });

    it('reports a full window, a minute long, for an address never counted', async () => {
      const key = fresh();
      const decision = await limits.peekForAddress(key);
      expect(decision).toMatchObject({ allowed: true, window: 'minute', limit: 3, remaining: 3, retryAfter: 60 });
      expect(decision.resetAt).toBeLessThanOrEqual(nowPlus(60_000));
      expect(decision.resetAt).toBeGreaterThanOrEqual(nowPlus(59_000));
      expect(await redis.exists(counter('addr', key))).toBe(0);
    });

    it('reports the time left in the window and refusal once the limit is used', async () => {
      const key = fresh();
      await redis.set(counter('addr', key), 3, 'PX', 20_500);
      const decision = await limits.peekForAddress(key);
      expect(decision).toMatchObject({ allowed: false, limit: 3, remaining: 0, retryAfter: 21 });
      expect(decision.resetAt).toBeLessThanOrEqual(nowPlus(20_500));
      expect(decision.resetAt).toBeGreaterThanOrEqual(nowPlus(19_500));
    });

    it('reports the last allowed request as still allowed', async () => {
      const key = fresh();
      await redis.set(counter('addr', key), 2, 'EX', 60);
      expect(await limits.peekForAddress(key)).toMatchObject({ allowed: true, remaining: 1 });
    });

    it('reports remaining 0, never negative, past the limit', async () => {
      const key = fresh();
      await redis.set(counter('addr', key), 9, 'EX', 60);
      expect(await limits.peekForAddress(key)).toMatchObject({ allowed: false, remaining: 0 });
    });

    it('reports a full minute for a counter without an expiry', async () => {
      const key = fresh();
      await redis.set(counter('addr', key), 1);
      expect(await limits.peekForAddress(key)).toMatchObject({ remaining: 2, retryAfter: 60 });
      await redis.del(counter('addr', key)); // no expiry: gone now even if this run is cut short
    });

    it('reports at least 1 s to wait when the window ends within the second', async () => {
      const key = fresh();
      await redis.set(counter('addr', key), 3, 'PX', 200);
      expect(await limits.peekForAddress(key)).toMatchObject({ allowed: false, retryAfter: 1 });
    });
  });

  describe('named limiters', () => {
    it('are created once per name, points and duration, and shared', () => {
      const login = limits.limiter('login', 5, 900);
      expect(limits.limiter('login', 5, 900)).toBe(login);
      expect(limits.limiter('login', 6, 900)).not.toBe(login);
      expect(limits.limiter('login', 5, 60)).not.toBe(login);
      expect(limits.limiter('resend', 5, 900)).not.toBe(login);
    });

    it('count under their own name with their points and duration', async () => {
      const name = fresh('login');
      const limiter = limits.limiter(name, 2, 900);
      await limiter.consume('dev_1');
      await limiter.consume('dev_1');
      await expect(limiter.consume('dev_1')).rejects.toBeInstanceOf(RateLimiterRes);
      expect(await redis.get(`${PREFIX}:rl:x:${name}:dev_1`)).toBe('3');
      expect(await redis.pttl(`${PREFIX}:rl:x:${name}:dev_1`)).toBeGreaterThan(899_000);
    });
  });

  describe('constructing on a new client', () => {
    it('defines the counting script there and counts in Redis, not in memory', async () => {
      const client = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
      try {
        const key = fresh();
        expect(await new RateLimits(client, config).consumeForPlatform(key)).toMatchObject({ allowed: true, window: 'burst' });
        expect(await redis.get(counter('plat:0', key))).toBe('1');
        expect(await redis.get(counter('plat:1', key))).toBe('1');
      } finally {
        await client.quit();
      }
    });
  });

  describe('constructing on a client that already has the script', () => {
    it('counts as before', async () => {
      const again = new RateLimits(redis, config);
      const key = fresh();
      await limits.consumeForAddress(key);
      expect(await again.consumeForAddress(key)).toMatchObject({ remaining: 1 });
    });
  });
});

describe('a hot key: blocks reserved in Redis (RateLeases)', () => {
  const withLimits = (perMinute: number, perDay: number) => ({ ...config, enterpriseLimits: { perMinute, perDay } });
  const reservations = (client: Redis) =>
    jest.spyOn(client as unknown as { reserveRateWindows: (...args: unknown[]) => unknown }, 'reserveRateWindows');
  /** Long enough for every lease to end and give back (leases last 100 ms). */
  const leasesEnded = () => new Promise((resolve) => setTimeout(resolve, 250));

  afterEach(() => jest.restoreAllMocks());

  it('asks Redis far less often than once a request, reports one request less remaining each time, and gives the unused points back', async () => {
    const key = fresh('hot');
    const hot = new RateLimits(redis, withLimits(10_000, 100_000));
    const reserve = reservations(redis);
    const remaining: number[] = [];
    for (let i = 0; i < 100; i++) remaining.push((await hot.consumeForUser(key, 'enterprise')).remaining);
    expect(remaining).toEqual(Array.from({ length: 100 }, (_v, i) => 10_000 - 1 - i));
    expect(reserve.mock.calls.length).toBeLessThan(30);
    await leasesEnded();
    // Exactly the requests made, however many were reserved.
    expect(await redis.get(counter('ent:0', key))).toBe('100');
    expect(await redis.get(counter('ent:1', key))).toBe('100');
  });

  it('answers a hot user at once from the lease this process holds, counting each request, and nothing without one', async () => {
    const key = fresh('hot');
    const hot = new RateLimits(redis, withLimits(10_000, 100_000));
    expect(hot.consumeLeasedForUser(key, 'enterprise')).toBeUndefined();
    expect(await redis.get(counter('ent:0', key))).toBeNull();
    let made = 0;
    const remaining: number[] = [];
    // A loaded machine can stall past a lease's 100 ms between the burst and the loop: then burst again.
    for (let attempt = 0; remaining.length === 0 && attempt < 5; attempt++) {
      made += await burst(hot, key);
      const reserve = reservations(redis);
      for (let decision = hot.consumeLeasedForUser(key, 'enterprise'); decision; decision = hot.consumeLeasedForUser(key, 'enterprise')) {
        expect(decision).toMatchObject({ allowed: true, window: 'minute', limit: 10_000 });
        remaining.push(decision.remaining);
      }
      // Spent from memory; at most the next block was reserved ahead.
      expect(reserve.mock.calls.length).toBeLessThanOrEqual(1);
      reserve.mockRestore();
    }
    expect(remaining.length).toBeGreaterThan(0);
    // One request less each time, as counted in Redis.
    expect(remaining).toEqual(Array.from({ length: remaining.length }, (_v, i) => remaining[0] - i));
    made += remaining.length;
    await leasesEnded();
    expect(await redis.get(counter('ent:0', key))).toBe(String(made));
    expect(await redis.get(counter('ent:1', key))).toBe(String(made));
  });

  it(`counts one at a time below ${EXACT_BELOW} left: two instances hammering a window of 200 admit exactly 200 and count every request`, async () => {
    const key = fresh('hot');
    const a = new RateLimits(redis, withLimits(200, 1_000));
    const b = new RateLimits(redis, withLimits(200, 1_000));
    const reserve = reservations(redis);
    const decisions = await Promise.all(Array.from({ length: 260 }, (_v, i) => (i % 2 ? a : b).consumeForUser(key, 'enterprise')));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(200);
    expect(decisions.filter((d) => !d.allowed).every((d) => d.window === 'minute' && d.remaining === 0)).toBe(true);
    // Hot enough to ask for blocks, but the window never had room to spare: each reservation was one request.
    expect(reserve.mock.calls.some((call) => Number(call[3]) > 1)).toBe(true);
    expect(reserve.mock.calls).toHaveLength(260);
    expect(await redis.get(counter('ent:0', key))).toBe('260');
  });

  it('two instances hammering a roomy window admit exactly the limit between them, and count every request', async () => {
    const key = fresh('hot');
    const a = new RateLimits(redis, withLimits(1_000, 100_000));
    const b = new RateLimits(redis, withLimits(1_000, 100_000));
    const reserve = reservations(redis);
    const decisions = await Promise.all(Array.from({ length: 1_200 }, (_v, i) => (i % 2 ? a : b).consumeForUser(key, 'enterprise')));
    expect(reserve.mock.calls.length).toBeLessThan(1_200);
    // Blocks come only from the room above the floor, so none is left unspent when the window fills.
    expect(decisions.filter((d) => d.allowed)).toHaveLength(1_000);
    await leasesEnded();
    expect(await redis.get(counter('ent:0', key))).toBe('1200');
    expect(await redis.get(counter('ent:1', key))).toBe('1200');
  });
});

describe('rate-limit windows while Redis is away (in-memory fallback)', () => {
  it('counts in this process with the same limit edge and window name', async () => {
    const key = fresh();
    const decisions = await repeat(4, () => offline.consumeForAddress(key));
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(decisions[3]).toMatchObject({ window: 'minute', limit: 3, retryAfter: 60 });
  });

  it('keeps the tightest-window choice and names the refusing window', async () => {
    const app = fresh('app');
    const decisions = await repeat(4, () => offline.consumeForPlatform(app));
    expect(decisions[0]).toMatchObject({ allowed: true, window: 'burst', remaining: 2, retryAfter: 1 });
    expect(decisions[3]).toMatchObject({ allowed: false, window: 'burst', limit: 3, remaining: 0 });
  });

  it('counts user tiers with their limits', async () => {
    const user = fresh('usr');
    const decisions = await repeat(5, () => offline.consumeForUser(user, 'enterprise'));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, false]);
    expect(decisions[4]).toMatchObject({ window: 'minute', limit: 4 });
  });

  it('peeks at what this process counted, without counting', async () => {
    const key = fresh();
    await offline.consumeForAddress(key);
    await offline.consumeForAddress(key);
    expect(await offline.peekForAddress(key)).toMatchObject({ allowed: true, remaining: 1, retryAfter: 60 });
    expect(await offline.peekForAddress(key)).toMatchObject({ remaining: 1 });
  });

  it('peeks at a full window for an address this process never counted', async () => {
    expect(await offline.peekForAddress(fresh())).toMatchObject({ allowed: true, remaining: 3, limit: 3, retryAfter: 60 });
  });

  it('keeps named limiters working', async () => {
    const limiter = offline.limiter(fresh('login'), 1, 60);
    await expect(limiter.consume('dev_1')).resolves.toMatchObject({ consumedPoints: 1 });
    await expect(limiter.consume('dev_1')).rejects.toBeInstanceOf(RateLimiterRes);
  });
});

/** A reply that records the headers set on it. */
function recordingReply(): FastifyReply & { headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  const reply = { headers, header: (name: string, value: string) => ((headers[name] = value), reply) };
  return reply as unknown as FastifyReply & { headers: Record<string, string> };
}

const decision = (extra: Partial<RateDecision> = {}): RateDecision => ({
  allowed: true,
  window: 'minute',
  limit: 60,
  remaining: 59,
  resetAt: 1_767_225_600,
  retryAfter: 60,
  ...extra,
});

describe('rate-limit headers', () => {
  it('are X-RateLimit-Limit, -Remaining and -Reset (epoch seconds), as strings', () => {
    const reply = recordingReply();
    applyRateHeaders(reply, decision());
    expect(reply.headers).toEqual({ 'X-RateLimit-Limit': '60', 'X-RateLimit-Remaining': '59', 'X-RateLimit-Reset': '1767225600' });
  });

  it('report remaining 0 on a refusal', () => {
    const reply = recordingReply();
    applyRateHeaders(reply, decision({ allowed: false, remaining: 0 }));
    expect(reply.headers['X-RateLimit-Remaining']).toBe('0');
  });
});

describe('user API rate-limit guards', () => {
  const context = (request: object, reply: FastifyReply) =>
    ({ switchToHttp: () => ({ getRequest: () => request, getResponse: () => reply }) }) as never;

  it('let a user through with the headers of the tightest window', async () => {
    const reply = recordingReply();
    const user = fresh('usr');
    await expect(new UserRateLimitGuard(limits).canActivate(context({ user: { id: user, tier: 'enterprise' } }, reply))).resolves.toBe(
      true,
    );
    expect(reply.headers).toMatchObject({ 'X-RateLimit-Limit': '4', 'X-RateLimit-Remaining': '3' });
  });

  it('let a user spending from this process’s lease through at once, without a promise', async () => {
    const user = fresh('usr');
    const hot = new RateLimits(redis, { ...config, enterpriseLimits: { perMinute: 10_000, perDay: 100_000 } });
    let made = 0;
    for (let attempt = 0; ; attempt++) {
      made += await burst(hot, user);
      const reply = recordingReply();
      const answer = new UserRateLimitGuard(hot).canActivate(context({ user: { id: user, tier: 'enterprise' } }, reply));
      made += 1;
      if (answer === true) {
        expect(reply.headers['X-RateLimit-Limit']).toBe('10000');
        expect(Number(reply.headers['X-RateLimit-Remaining'])).toBeLessThanOrEqual(10_000 - made);
        break;
      }
      // The lease ended before this request (a stalled machine): it was counted with a round trip instead.
      await expect(answer).resolves.toBe(true);
      if (attempt === 4) throw new Error('no request was answered from a lease in 5 bursts');
    }
  });

  it('refuse a user past the limit with RATE_LIMITED, the headers and Retry-After', async () => {
    const user = fresh('usr');
    await redis.set(counter('ent:0', user), 4, 'PX', 42_500);
    const reply = recordingReply();
    const error = await Promise.resolve(
      new UserRateLimitGuard(limits).canActivate(context({ user: { id: user, tier: 'enterprise' } }, reply)),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      code: 'RATE_LIMITED',
      status: 429,
      message: 'Rate limit of 4 requests exceeded; retry in 43 s',
      headers: { 'Retry-After': '43' },
    });
    expect(reply.headers).toMatchObject({ 'X-RateLimit-Limit': '4', 'X-RateLimit-Remaining': '0' });
  });

  it('let an address through and count it', async () => {
    const reply = recordingReply();
    const ip = fresh('ip');
    await expect(new AddressRateLimitGuard(limits).canActivate(context({ ip }, reply))).resolves.toBe(true);
    expect(reply.headers).toMatchObject({ 'X-RateLimit-Limit': '3', 'X-RateLimit-Remaining': '2' });
    expect(await redis.get(counter('addr', ip))).toBe('1');
  });

  it('refuse an address past the limit with RATE_LIMITED and Retry-After', async () => {
    const ip = fresh('ip');
    await redis.set(counter('addr', ip), 3, 'PX', 9_500);
    const reply = recordingReply();
    const error = await new AddressRateLimitGuard(limits).canActivate(context({ ip }, reply)).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'RATE_LIMITED',
      message: 'Rate limit of 3 requests exceeded; retry in 10 s',
      headers: { 'Retry-After': '10' },
    });
    expect(reply.headers).toMatchObject({ 'X-RateLimit-Remaining': '0' });
  });
});

describe('consumeWindow: one window whose size the caller gives per key (webhook events by tier)', () => {
  it('allows the n-th request and refuses the n+1-th, naming the rule, with a minute-long window', async () => {
    const app = fresh('app');
    const decisions = await repeat(3, () => limits.consumeWindow('webhook_events', app, 2, 60));
    expect(decisions.map((d) => [d.allowed, d.remaining, d.limit])).toEqual([
      [true, 1, 2],
      [true, 0, 2],
      [false, 0, 2],
    ]);
    expect(decisions[2]).toMatchObject({ window: 'webhook_events', retryAfter: 60 });
    expect(decisions[2].resetAt).toBeLessThanOrEqual(nowPlus(60_000));
    expect(decisions[2].resetAt).toBeGreaterThanOrEqual(nowPlus(59_000));
    expect(await redis.pttl(counter('w:webhook_events', app))).toBeGreaterThan(59_000);
  });

  it('keeps counting under the same key when the size changes (an app moved to another tier)', async () => {
    const app = fresh('app');
    await repeat(2, () => limits.consumeWindow('webhook_events', app, 2, 60));
    expect(await limits.consumeWindow('webhook_events', app, 5, 60)).toMatchObject({ allowed: true, limit: 5, remaining: 2 });
    expect(await redis.get(counter('w:webhook_events', app))).toBe('3');
  });

  it('counts each key and each rule apart, and shares one window per rule and size', async () => {
    const [a, b] = [fresh('app'), fresh('app')];
    await limits.consumeWindow('webhook_events', a, 2, 60);
    expect(await limits.consumeWindow('webhook_events', b, 2, 60)).toMatchObject({ remaining: 1 });
    expect(await limits.consumeWindow('other_rule', a, 2, 60)).toMatchObject({ remaining: 1, window: 'other_rule' });
    expect(await limits.consumeWindow('webhook_events', a, 2, 60)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('uses the duration it is given', async () => {
    const app = fresh('app');
    expect(await limits.consumeWindow('short', app, 1, 5)).toMatchObject({ allowed: true, retryAfter: 5 });
    expect(await redis.pttl(counter('w:short', app))).toBeLessThanOrEqual(5_000);
  });

  it('counts in memory with the same rule while Redis is away', async () => {
    const app = fresh('app');
    const decisions = await repeat(3, () => offline.consumeWindow('webhook_events', app, 2, 60));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, false]);
  });
});

describe('applyTighterRateHeaders: a route under two limits reports the one that refuses first', () => {
  function reply(initial: Record<string, string> = {}) {
    const headers: Record<string, string> = {};
    const stub = {
      headers,
      header: (name: string, value: string) => ((headers[name.toLowerCase()] = value), stub),
      getHeader: (name: string) => headers[name.toLowerCase()],
      hasHeader: (name: string) => name.toLowerCase() in headers,
    };
    for (const [name, value] of Object.entries(initial)) stub.header(name, value);
    return stub as unknown as FastifyReply & { headers: Record<string, string> };
  }
  const reported = (remaining: number) => ({
    'X-RateLimit-Limit': '600',
    'X-RateLimit-Remaining': String(remaining),
    'X-RateLimit-Reset': '1',
  });

  it('reports the decision on a reply without headers', () => {
    const r = reply();
    applyTighterRateHeaders(r, decision({ limit: 200, remaining: 150 }));
    expect(r.headers).toEqual({ 'x-ratelimit-limit': '200', 'x-ratelimit-remaining': '150', 'x-ratelimit-reset': '1767225600' });
  });

  it('reports the decision when it has fewer requests left than the reported window', () => {
    const r = reply(reported(500));
    applyTighterRateHeaders(r, decision({ limit: 200, remaining: 150 }));
    expect(r.headers).toMatchObject({ 'x-ratelimit-limit': '200', 'x-ratelimit-remaining': '150' });
  });

  it('keeps the reported window when it has fewer requests left, or as many', () => {
    for (const remaining of [10, 150]) {
      const r = reply(reported(remaining));
      applyTighterRateHeaders(r, decision({ limit: 200, remaining: 150 }));
      expect(r.headers).toMatchObject({ 'x-ratelimit-limit': '600', 'x-ratelimit-remaining': String(remaining) });
    }
  });

  it('always reports a refusal', () => {
    const r = reply(reported(0));
    applyTighterRateHeaders(r, decision({ allowed: false, limit: 200, remaining: 0 }));
    expect(r.headers).toMatchObject({ 'x-ratelimit-limit': '200', 'x-ratelimit-remaining': '0' });
  });
});
