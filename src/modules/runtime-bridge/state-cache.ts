import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { REDIS } from '../../infra/redis/redis.module';
import { getMany, type RedisClient } from '../../infra/redis/redis-client';

/** The latest data of one capability of one install, as surfaces read it. */
export interface CachedState {
  data: Record<string, unknown>;
  /** Params the data was fetched with (for the widget copy: the widget params, see `widgetParams` in state-poller.ts). */
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

/** A copy as its writer gives it; the cache adds the refresh bookkeeping. */
type NewEntry = Omit<CachedState, 'stale' | 'failures' | 'attemptedAt'>;

/** Both copies of one capability of one install, as an API call reads them before it calls the runtime. */
export interface CachedCopies {
  last?: CachedState;
  widget?: CachedState;
}

/** Cached copies outlive their ttl on purpose: surfaces serve the last copy (marked stale) while refreshes fail. */
const RETENTION_SECONDS = 7 * 24 * 3600;
/** Consecutive failed refreshes after which the cached copy is marked stale. */
export const STALE_AFTER_FAILURES = 3;

/**
 * Redis cache of capability data per install and capability, two copies:
 * - the last copy (`store`/`get`): the latest state answer whatever its params
 *   (what an API call's `ttl` is served from), the latest realtime event and
 *   the latest webhook event; surfaces render realtime and webhook data from it;
 * - the widget copy (`storeWidget`/`getWidget`) of a state capability: written
 *   only by the poller, always with the widget params (the schema's defaults),
 *   so a user's one-off call with other params never changes what the
 *   surfaces show (docs/components.md, "Which params a widget shows").
 */
@Injectable()
export class StateCache {
  private readonly logger = new Logger(StateCache.name);

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private key(installId: string, capability: string, copy: 'last' | 'widget' = 'last'): string {
    return `${this.config.redisPrefix}:${copy === 'widget' ? 'state-widget' : 'state'}:${installId}:${capability}`;
  }

  async get(installId: string, capability: string): Promise<CachedState | undefined> {
    const raw = await this.redis.get(this.key(installId, capability));
    return raw ? (JSON.parse(raw) as CachedState) : undefined;
  }

  /** The widget copy of a state capability (see the class comment). */
  async getWidget(installId: string, capability: string): Promise<CachedState | undefined> {
    const raw = await this.redis.get(this.key(installId, capability, 'widget'));
    return raw ? (JSON.parse(raw) as CachedState) : undefined;
  }

  /** Both copies in one round trip: an API call reads them while its limit is counted (and passes them to `store`). */
  async getCopies(installId: string, capability: string): Promise<CachedCopies> {
    const [last, widget] = await this.getMany([
      { installId, capability },
      { installId, capability, copy: 'widget' },
    ]);
    return { last, widget };
  }

  async getMany(keys: Array<{ installId: string; capability: string; copy?: 'last' | 'widget' }>): Promise<Array<CachedState | undefined>> {
    const raws = await getMany(
      this.redis,
      keys.map((k) => this.key(k.installId, k.capability, k.copy)),
    );
    return raws.map((raw) => (raw ? (JSON.parse(raw) as CachedState) : undefined));
  }

  /**
   * Writes the last copy. A state answer fetched with the same params as the
   * widget copy is fresher data for the widget: it replaces the widget copy
   * too (keeping its poll pacing); an answer with other params never does.
   * Polls, realtime events and webhook events; API calls write with
   * `storeInBackground`.
   */
  async store(installId: string, capability: string, entry: NewEntry): Promise<CachedState> {
    const full = StateCache.complete(entry);
    await this.write(installId, capability, full);
    return full;
  }

  /**
   * `store` for a caller answered with the copy before Redis acknowledges it
   * (an API call). It passes the copies it read before calling the runtime
   * (`getCopies`), so the write needs no read of the widget copy first; a poll
   * that ran meanwhile then loses only its pacing (the next poll may come one
   * interval early), never data: this answer is at least as fresh. The write is sent at once on
   * this process's connection, whose commands run in order, so every later
   * read by this process sees it; another client may read the previous copy
   * for a round trip, and a failed write (logged, never thrown) costs the
   * next call a runtime call, never a wrong answer (docs/decisions.md, "The
   * bridge's cache write").
   */
  storeInBackground(installId: string, capability: string, entry: NewEntry, read: CachedCopies): CachedState {
    const full = StateCache.complete(entry);
    this.write(installId, capability, full, read).catch((error: unknown) =>
      this.logger.warn({ err: error, installId, capability }, 'state answer not cached'),
    );
    return full;
  }

  private async write(installId: string, capability: string, full: CachedState, read?: CachedCopies): Promise<void> {
    const widget = full.source !== 'state' ? undefined : read ? read.widget : await this.getWidget(installId, capability);
    // Two keys in different cluster slots: two writes, not one MULTI.
    await Promise.all([
      this.redis.set(this.key(installId, capability), JSON.stringify(full), 'EX', RETENTION_SECONDS),
      widget && JSON.stringify(widget.params) === JSON.stringify(full.params)
        ? this.redis.set(
            this.key(installId, capability, 'widget'),
            JSON.stringify({ ...full, attemptedAt: widget.attemptedAt }),
            'EX',
            RETENTION_SECONDS,
          )
        : undefined,
    ]);
  }

  private static complete(entry: NewEntry): CachedState {
    return { ...entry, stale: false, failures: 0, attemptedAt: Date.now() };
  }

  /** Writes the widget copy of a state capability (the poller only, with the widget params). */
  async storeWidget(installId: string, capability: string, entry: NewEntry): Promise<CachedState> {
    const full = StateCache.complete(entry);
    await this.redis.set(this.key(installId, capability, 'widget'), JSON.stringify(full), 'EX', RETENTION_SECONDS);
    return full;
  }

  /**
   * Counts a failed refresh of the widget copy; it turns stale after a few in a
   * row (the poller's Redis schedule paces retries when there is no copy yet).
   */
  async markFailure(installId: string, capability: string): Promise<CachedState | undefined> {
    const current = await this.getWidget(installId, capability);
    if (!current) return undefined;
    const failures = current.failures + 1;
    const next = { ...current, failures, stale: current.stale || failures >= STALE_AFTER_FAILURES, attemptedAt: Date.now() };
    await this.redis.set(this.key(installId, capability, 'widget'), JSON.stringify(next), 'EX', RETENTION_SECONDS);
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
