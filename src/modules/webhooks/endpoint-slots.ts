import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { REDIS } from '../../infra/redis/redis.module';
import type { RedisClient } from '../../infra/redis/redis-client';

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

/**
 * A job waits in its worker for a slot rather than being started again later.
 * At most this many wait for one endpoint in one process: half the delivery
 * processor's concurrency (64), so a slow endpoint leaves the other half to
 * the rest.
 */
export const MAX_WAITERS_PER_ENDPOINT = 32;
/** Longest a job waits for a slot before it is deferred (moved back to delayed). */
const MAX_WAIT_MS = 10_000;
/** How often a waiter tries Redis when no slot was handed to it in this process (a slot freed by another worker). */
const POLL_MS = 100;

/** One of an endpoint's concurrency slots, held by this process until released. */
export interface Slot {
  appId: string;
  holder: string;
  /** When the hold recorded in Redis lapses (a crashed holder frees it then). */
  heldUntil: number;
  holdMs: number;
}

type Waiter = (slot: Slot) => void;

/**
 * Per-endpoint concurrency limit shared by every worker process: a sorted set
 * of holders scored by when their hold expires, so a worker killed mid-request
 * frees its slot after the longest delivery timeout instead of never.
 *
 * A delivery whose endpoint has its share in flight waits in its worker,
 * without being started again. When a delivery ends and another waits in the
 * same process for the same endpoint, the slot is handed over in memory, with
 * no Redis round trip (the hold is renewed only when half of it has passed);
 * waiters also poll Redis for slots freed by other workers. Waiters are
 * bounded per endpoint so one slow endpoint cannot take every worker slot;
 * past the bound (or after MAX_WAIT_MS) the job is deferred.
 */
@Injectable()
export class EndpointSlots {
  private readonly waiters = new Map<string, Waiter[]>();
  private readonly instance = randomUUID();
  private taken = 0;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Takes a slot, waiting for one if need be; null when the caller should defer the job instead. */
  async take(appId: string, holdMs: number): Promise<Slot | null> {
    const fresh = await this.acquire(appId, holdMs);
    if (fresh) return fresh;
    const queue = this.waiters.get(appId) ?? [];
    if (queue.length >= MAX_WAITERS_PER_ENDPOINT) return null;
    this.waiters.set(appId, queue);
    const deadline = Date.now() + MAX_WAIT_MS;
    while (Date.now() < deadline) {
      const handed = await new Promise<Slot | null>((resolve) => {
        const waiter: Waiter = (slot) => {
          clearTimeout(timer);
          resolve(slot);
        };
        const timer = setTimeout(
          () => {
            this.forget(appId, waiter);
            resolve(null);
          },
          POLL_MS + Math.floor(Math.random() * POLL_MS),
        );
        queue.push(waiter);
      });
      if (handed) return handed;
      const polled = await this.acquire(appId, holdMs);
      if (polled) return polled;
    }
    return null;
  }

  /** Gives the slot to the next delivery waiting here for the same endpoint, or back to Redis. */
  async release(slot: Slot): Promise<void> {
    const next = this.waiters.get(slot.appId)?.shift();
    if (!next) {
      this.waiters.delete(slot.appId);
      await this.redis.zrem(this.key(slot.appId), slot.holder);
      return;
    }
    if (slot.heldUntil - Date.now() < slot.holdMs / 2) {
      // Renew the hold before handing it on, so a long run of handovers never outlives it.
      const heldUntil = Date.now() + slot.holdMs;
      await this.redis.zadd(this.key(slot.appId), 'XX', heldUntil, slot.holder).catch(() => undefined);
      slot = { ...slot, heldUntil };
    }
    next(slot);
  }

  private async acquire(appId: string, holdMs: number): Promise<Slot | null> {
    const now = Date.now();
    const holder = `${this.instance}:${++this.taken}`;
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
    return result === 1 ? { appId, holder, heldUntil: now + holdMs, holdMs } : null;
  }

  private forget(appId: string, waiter: Waiter): void {
    const queue = this.waiters.get(appId);
    if (!queue) return;
    const at = queue.indexOf(waiter);
    if (at >= 0) queue.splice(at, 1);
  }

  private key(appId: string): string {
    return `${this.config.redisPrefix}:webhook-slots:${appId}`;
  }
}
