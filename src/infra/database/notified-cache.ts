import { Logger } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { PgListener } from './pg-listener';

/** What a loader found: the value and how long it may be trusted (never longer than the cache's TTL). */
export interface Loaded<V> {
  value: V;
  /** A shorter trust than the cache's TTL, e.g. until a session or a grace period ends. */
  ttlMs?: number;
  /** The owner, when the lookup could not name it before loading (`get` with a null owner). */
  owner?: string;
}

/** Payloads on a cache's channel that are fences (see `CacheFence`), not owner keys: `!fence <reply channel> <token>`. */
export const FENCE_PREFIX = '!fence ';

/** The cross-instance barrier (`CacheFence`), as a cache sees it. */
export interface FenceMembership {
  /** Lists the cache as listening on `channel`; returns its member id. */
  join(channel: string): string;
  leave(memberId: string): void;
  /** Answers a fence payload (one that starts with `FENCE_PREFIX`). */
  answer(payload: string, memberId: string): void;
  /** Resolves once every listening cache on `channel` has handled what was committed before the call. */
  pass(channel: string): Promise<void>;
}

export interface NotifiedCacheOptions {
  databaseUrl: string;
  /** The PostgreSQL channel whose triggers announce changes; the payload is the owner key of what changed. */
  channel: string;
  /** Longest an entry is trusted without asking PostgreSQL again, in case a notification went missing. */
  ttlMs: number;
  /** Entries kept (lru-cache preallocates its slots: about 40 bytes each, plus the entries). */
  max: number;
  logger: Logger;
  /**
   * The application instance the cache belongs to (its `DataSource`), for
   * `NotifiedCache.forgetInScope` from the repositories that change what it
   * holds; without one, only `forgetOwner` and the notifications drop entries.
   */
  scope?: object;
  /**
   * Told after entries were dropped: the owner key of an announced change, or
   * null when changes may have gone unannounced (the listening connection
   * (re)started).
   */
  onChange?: (owner: string | null) => void;
  /** Makes `fence()` wait for every instance (see `CacheFence`); without it `fence()` resolves at once. */
  fence?: FenceMembership;
}

/**
 * Answers read from PostgreSQL on every request (is this session live, what
 * does this token stand on), remembered in this process for up to a TTL and
 * dropped:
 *
 * - at once, in this process, by code that changed what they hold and calls
 *   `forgetOwner` after its transaction commits;
 * - in every process, when a trigger's notification on `channel` arrives
 *   (PostgreSQL sends it on commit of the change, whoever made it: another
 *   instance, an operator in psql);
 * - all of them, when the listening connection (a `PgListener`, which
 *   reconnects every second) is lost; until it is back, every lookup asks
 *   PostgreSQL.
 *
 * Each entry belongs to an owner key (a user, a developer): a notification
 * drops all of the owner's entries. A lookup that started before an
 * invalidation is not stored (generation check), so an answer read before a
 * change cannot outlive the notification of that change. Absent answers
 * (null) are never stored: a refusal always asks again.
 */
export class NotifiedCache<V extends object> {
  /** The listening caches by scope (an application's data source) and channel, for `forgetInScope`. */
  private static readonly byScope = new WeakMap<object, Map<string, Set<(owner: string | null) => void>>>();

  /**
   * Drops an owner's entries (or, with null, every entry) in every cache of
   * the scope (an application instance: its data source) that listens on
   * `channel`, as that channel's notification will, but without waiting for
   * it: for the code that made the change, after its commit (see
   * `SqlRepository.forgetAfterTransaction`), so that the instance's next
   * lookup already sees the change. Other instances learn it from the
   * notification. Scoped rather than process-wide so that two instances in
   * one process (the e2e tests) stay as separate as two processes.
   */
  static forgetInScope(scope: object, channel: string, owner: string | null): void {
    for (const forget of NotifiedCache.byScope.get(scope)?.get(channel) ?? []) forget(owner);
  }

  /** One cache for all owners rather than one per owner: an lru-cache holds about 3 KB even when nearly empty. */
  private readonly entries: LRUCache<string, { owner: string; value: V }>;
  /** The keys of each owner, so that an owner's entries can be dropped together. */
  private readonly keysByOwner = new Map<string, Set<string>>();
  private readonly listener: PgListener;
  private generation = 0;
  /** What `NotifiedCache.forgetInScope` calls on this cache. */
  private readonly forgetInScope = (owner: string | null) => (owner === null ? this.forgetAll() : this.forgetOwner(owner));
  private listening = false;
  private started = false;
  /** This cache's id among the fence's members while its listener is up. */
  private memberId: string | null = null;

  constructor(private readonly options: NotifiedCacheOptions) {
    this.entries = new LRUCache({
      max: options.max,
      perf: Date,
      ttlResolution: 0,
      dispose: (entry, key) => this.unindex(entry.owner, key),
    });
    this.listener = new PgListener(
      options.databaseUrl,
      options.channel,
      (payload) => {
        // No payload: the (re)connect call, handled by `connected`.
        if (!payload) return;
        if (payload.startsWith(FENCE_PREFIX)) {
          if (this.memberId !== null) options.fence?.answer(payload, this.memberId);
          return;
        }
        this.forgetOwner(payload);
        this.tell(payload);
      },
      options.logger,
      {
        connected: () => {
          // Changes made before LISTEN took effect were not announced to us: start from nothing.
          this.forgetAll();
          this.listening = true;
          this.tell(null);
          if (options.fence) this.memberId = options.fence.join(options.channel);
        },
        lost: () => {
          this.listening = false;
          this.leaveFence();
          this.forgetAll();
          options.logger.warn(`${options.channel} listener lost; asking PostgreSQL on every lookup until it is back`);
        },
      },
    );
  }

  /**
   * The remembered answer for `key`, or `load`'s, stored under `owner` (or,
   * when null, the owner the loader names) when the listener is up and nothing
   * was invalidated meanwhile.
   */
  async get(key: string, owner: string | null, load: () => Promise<Loaded<V> | null>): Promise<V | null> {
    if (this.listening) {
      const known = this.entries.get(key);
      if (known) return known.value;
    } else {
      this.listen();
    }
    const generation = this.generation;
    const found = await load();
    const ownedBy = owner ?? found?.owner;
    if (found && ownedBy !== undefined && this.listening && generation === this.generation) {
      // lru-cache calls an entry stale once its age exceeds its TTL: the last millisecond it stands is one before its end.
      const ttl = Math.min(this.options.ttlMs, found.ttlMs ?? Infinity) - 1;
      if (ttl >= 1) {
        this.entries.set(key, { owner: ownedBy, value: found.value }, { ttl, start: Date.now() });
        let keys = this.keysByOwner.get(ownedBy);
        if (!keys) this.keysByOwner.set(ownedBy, (keys = new Set()));
        keys.add(key);
      }
    }
    return found?.value ?? null;
  }

  /**
   * The remembered answer for `key`, at once, while the listener is up and
   * the answer stands; undefined otherwise (then `get` loads it).
   */
  peek(key: string): V | undefined {
    return this.listening ? this.entries.get(key)?.value : undefined;
  }

  /** Whether answers are being remembered (the listening connection is up). */
  get remembering(): boolean {
    return this.listening;
  }

  /** Drops what this process remembers for an owner; call after committing a change to what its entries hold. */
  forgetOwner(owner: string): void {
    this.generation += 1;
    const keys = this.keysByOwner.get(owner);
    if (keys) for (const key of [...keys]) this.entries.delete(key);
  }

  /** Starts the listening connection (lookups start it lazily); it then reconnects by itself. */
  listen(): void {
    if (this.started) return;
    this.started = true;
    const { scope, channel } = this.options;
    if (scope) {
      let channels = NotifiedCache.byScope.get(scope);
      if (!channels) NotifiedCache.byScope.set(scope, (channels = new Map<string, Set<(owner: string | null) => void>>()));
      let caches = channels.get(channel);
      if (!caches) channels.set(channel, (caches = new Set<(owner: string | null) => void>()));
      caches.add(this.forgetInScope);
    }
    void this.listener.start();
  }

  /**
   * Resolves once every instance's cache on this channel has handled every
   * change committed before the call (see `CacheFence`): for code that revoked
   * something, before it answers.
   */
  async fence(): Promise<void> {
    await this.options.fence?.pass(this.options.channel);
  }

  async stop(): Promise<void> {
    this.listening = false;
    this.leaveFence();
    if (this.options.scope) NotifiedCache.byScope.get(this.options.scope)?.get(this.options.channel)?.delete(this.forgetInScope);
    await this.listener.stop();
  }

  private leaveFence(): void {
    if (this.memberId !== null) this.options.fence?.leave(this.memberId);
    this.memberId = null;
  }

  private tell(owner: string | null): void {
    try {
      this.options.onChange?.(owner);
    } catch (error) {
      this.options.logger.error({ err: error }, `${this.options.channel} change handler failed`);
    }
  }

  private forgetAll(): void {
    this.generation += 1;
    this.entries.clear();
    this.keysByOwner.clear();
  }

  /** Called by the cache whenever an entry leaves it (deleted, replaced, evicted or expired). */
  private unindex(owner: string, key: string): void {
    const keys = this.keysByOwner.get(owner);
    if (!keys) return;
    keys.delete(key);
    if (keys.size === 0) this.keysByOwner.delete(owner);
  }
}
