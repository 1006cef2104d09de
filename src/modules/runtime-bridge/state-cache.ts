import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { REDIS } from '../../infra/redis/redis.module';
import { getMany, type RedisClient } from '../../infra/redis/redis-client';

/** The latest data of one capability of one install, as surfaces read it. */
export interface CachedState {
  data: Record<string, unknown>;
  /** Params the data was fetched with; the poller refreshes with the same. */
  params: Record<string, unknown>;
  /** Seconds the runtime said the data stays valid (`state`); 0 for pushed data. */
  ttl: number;
  metadata?: unknown;
  fetchedAt: string;
  degraded: boolean;
  /** Refreshes kept failing: the copy is still served, marked stale. */
  stale: boolean;
  failures: number;
  /** Last refresh attempt (ms since epoch), successful or not; paces the poller. */
  attemptedAt: number;
  source: 'state' | 'realtime' | 'webhook';
}

/** Cached copies outlive their ttl on purpose: surfaces serve the last copy (marked stale) while refreshes fail. */
const RETENTION_SECONDS = 7 * 24 * 3600;
/** Consecutive failed refreshes after which the cached copy is marked stale. */
export const STALE_AFTER_FAILURES = 3;

/**
 * Redis cache of capability data per install and capability: state answers
 * (for `ttl`), the latest realtime event and the latest webhook event. It is
 * what surfaces render from.
 */
@Injectable()
export class StateCache {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private key(installId: string, capability: string): string {
    return `${this.config.redisPrefix}:state:${installId}:${capability}`;
  }

  async get(installId: string, capability: string): Promise<CachedState | undefined> {
    const raw = await this.redis.get(this.key(installId, capability));
    return raw ? (JSON.parse(raw) as CachedState) : undefined;
  }

  async getMany(keys: Array<{ installId: string; capability: string }>): Promise<Array<CachedState | undefined>> {
    const raws = await getMany(
      this.redis,
      keys.map((k) => this.key(k.installId, k.capability)),
    );
    return raws.map((raw) => (raw ? (JSON.parse(raw) as CachedState) : undefined));
  }

  async store(installId: string, capability: string, entry: Omit<CachedState, 'stale' | 'failures' | 'attemptedAt'>): Promise<CachedState> {
    const full: CachedState = { ...entry, stale: false, failures: 0, attemptedAt: Date.now() };
    await this.redis.set(this.key(installId, capability), JSON.stringify(full), 'EX', RETENTION_SECONDS);
    return full;
  }

  /** Counts a failed refresh; the copy turns stale after a few in a row. */
  async markFailure(installId: string, capability: string): Promise<CachedState | undefined> {
    const current = await this.get(installId, capability);
    if (!current) return undefined;
    const failures = current.failures + 1;
    const next = { ...current, failures, stale: current.stale || failures >= STALE_AFTER_FAILURES, attemptedAt: Date.now() };
    await this.redis.set(this.key(installId, capability), JSON.stringify(next), 'EX', RETENTION_SECONDS);
    return next;
  }

  async markStale(installId: string, capability: string): Promise<void> {
    const current = await this.get(installId, capability);
    if (current && !current.stale)
      await this.redis.set(this.key(installId, capability), JSON.stringify({ ...current, stale: true }), 'EX', RETENTION_SECONDS);
  }

  /** Whether a cached state answer may be served without calling the runtime. */
  static isFresh(entry: CachedState | undefined, params: Record<string, unknown>): entry is CachedState {
    if (!entry || entry.stale || entry.source !== 'state' || entry.degraded) return false;
    if (JSON.stringify(entry.params) !== JSON.stringify(params)) return false;
    return Date.parse(entry.fetchedAt) + entry.ttl * 1000 > Date.now();
  }
}
