import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import type { RedisClient } from '../../src/infra/redis/redis-client';
import { StateCache } from '../../src/modules/runtime-bridge/state-cache';
import { TestEnvironment } from '../support/harness';

/**
 * The state cache's write behind an API answer (`StateCache.storeInBackground`,
 * docs/decisions.md "The bridge's cache write"), against a real Redis: the
 * copy is answered at once, this process's next read sees it, and a write
 * Redis refuses is logged, never thrown and never left unhandled.
 */
describe('StateCache.storeInBackground', () => {
  let env: TestEnvironment;
  let redis: Redis;
  let cache: StateCache;
  const answer = {
    data: { available: 12.5 },
    params: { account: 'checking' },
    ttl: 60,
    fetchedAt: new Date().toISOString(),
    degraded: false,
    source: 'state' as const,
  };

  beforeAll(async () => {
    env = await TestEnvironment.create();
    redis = new Redis(env.env.REDIS_URL, { enableAutoPipelining: true });
    cache = new StateCache(redis as RedisClient, env.config());
  });

  afterAll(async () => {
    await redis.quit();
    await env.close();
  });

  it('answers the completed copy at once, and the next read on the same connection sees it', async () => {
    const copies = await cache.getCopies('inst_bg1', 'balance');
    expect(copies).toEqual({ last: undefined, widget: undefined });
    const stored = cache.storeInBackground('inst_bg1', 'balance', answer, copies);
    expect(stored).toMatchObject({ ...answer, stale: false, failures: 0, attemptedAt: expect.any(Number) });
    // Issued right after, on the same connection: Redis runs it after the write.
    const read = await cache.getCopies('inst_bg1', 'balance');
    expect(read.last).toEqual(stored);
    expect(StateCache.isFresh(read.last, answer.params)).toBe(true);
  });

  it('replaces the widget copy when the params are the widget params, keeping its poll pacing', async () => {
    const widget = await cache.storeWidget('inst_bg2', 'balance', { ...answer, data: { available: 1 } });
    const stored = cache.storeInBackground('inst_bg2', 'balance', answer, await cache.getCopies('inst_bg2', 'balance'));
    const read = await cache.getCopies('inst_bg2', 'balance');
    expect(read.widget).toEqual({ ...stored, attemptedAt: widget.attemptedAt });
  });

  it('logs a write Redis refuses and still answers the copy, with no rejection left unhandled', async () => {
    // A client already closed: every command fails at once, as on a connection Redis dropped.
    const away = new Redis({ lazyConnect: true });
    away.disconnect();
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const offline = new StateCache(away as RedisClient, env.config());
      const stored = offline.storeInBackground('inst_bg3', 'balance', answer, { last: undefined, widget: undefined });
      expect(stored.data).toEqual(answer.data);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(warn).toHaveBeenCalledWith(
        expect.objectContaining({ installId: 'inst_bg3', capability: 'balance' }),
        'state answer not cached',
      );
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
      warn.mockRestore();
    }
  });
});
