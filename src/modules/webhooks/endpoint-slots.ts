import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { REDIS } from '../../infra/redis/redis.module';

/** Drops expired holders, then takes a slot when fewer than the limit are held. */
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[3]) then return 1 end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return 1
end
return 0`;

/** A job waits in its worker for a slot rather than being started again later; at most this many waiters per slot, per process. */
const WAITERS_PER_SLOT = 4;
/** Longest a job waits for a slot before it is deferred (moved back to delayed). */
const MAX_WAIT_MS = 10_000;
/** How often a waiter tries again when no release in this process woke it (a slot freed by another worker). */
const POLL_MS = 100;

/**
 * Per-endpoint concurrency limit shared by every worker process: a sorted set
 * of holders scored by when their hold expires, so a worker killed mid-request
 * frees its slot after the longest delivery timeout instead of never.
 *
 * A delivery whose endpoint has its share in flight waits in its worker,
 * without being started again: a release in this process hands the slot to
 * the next local waiter at once, and waiters poll for slots freed elsewhere.
 * Waiters are bounded per endpoint so one slow endpoint cannot take every
 * worker slot; past the bound (or after MAX_WAIT_MS) the job is deferred.
 */
@Injectable()
export class EndpointSlots {
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Takes a slot, waiting for one if need be; false when the caller should defer the job instead. */
  async take(appId: string, holder: string, holdMs: number): Promise<boolean> {
    if (await this.acquire(appId, holder, holdMs)) return true;
    const waiting = this.waiters.get(appId) ?? new Set<() => void>();
    if (waiting.size >= this.config.webhooks.endpointConcurrency * WAITERS_PER_SLOT) return false;
    this.waiters.set(appId, waiting);
    const deadline = Date.now() + MAX_WAIT_MS;
    try {
      while (Date.now() < deadline) {
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            waiting.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, POLL_MS + Math.floor(Math.random() * POLL_MS));
          waiting.add(wake);
        });
        if (await this.acquire(appId, holder, holdMs)) return true;
      }
      return false;
    } finally {
      if (waiting.size === 0) this.waiters.delete(appId);
    }
  }

  async acquire(appId: string, holder: string, holdMs: number): Promise<boolean> {
    const now = Date.now();
    const result = await this.redis.eval(
      ACQUIRE,
      1,
      this.key(appId),
      now,
      now + holdMs,
      holder,
      this.config.webhooks.endpointConcurrency,
      holdMs,
    );
    return result === 1;
  }

  /** Frees the slot and wakes the next waiter of this endpoint in this process. */
  async release(appId: string, holder: string): Promise<void> {
    await this.redis.zrem(this.key(appId), holder);
    const next = this.waiters.get(appId)?.values().next().value;
    next?.();
  }

  private key(appId: string): string {
    return `${this.config.redisPrefix}:webhook-slots:${appId}`;
  }
}
