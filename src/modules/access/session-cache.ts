import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { PgListener } from '../../infra/database/pg-listener';
import { AuthenticatedUser } from './authenticated-user';
import { Sessions } from './sessions.service';

/** PostgreSQL channel on which triggers announce changes to a user's sessions, tier, profile or soul (payload: user id). */
export const USER_AUTH_CHANNEL = 'user_auth_changed';
/** Longest a checked session is trusted without asking PostgreSQL again, in case a notification went missing. */
export const SESSION_CHECK_TTL_MS = 10_000;
/** Checked sessions remembered per process (lru-cache preallocates its slots: about 40 bytes each, plus the entries). */
const CHECKS_KEPT = 50_000;

/** Told the user id of every announced change, or null when changes may have gone unannounced (see `SessionCache.watch`). */
export type UserAuthWatcher = (userId: string | null) => void;

/**
 * The session check of every user API request (session live, user present,
 * tier and profile), remembered in this process for up to
 * `SESSION_CHECK_TTL_MS`. Entries are dropped:
 *
 * - at once, in this process, by the code that changes what they hold (logout,
 *   login, tier change, soul deletion) after its transaction commits;
 * - in every process, when the `user_auth_changed` notification arrives, which
 *   triggers send on commit of any such change, whoever made it (another
 *   instance, an operator in psql);
 * - all of them, when the listening connection (a shared `PgListener`, which
 *   reconnects every second) is lost; until it is back, every request asks
 *   PostgreSQL.
 *
 * A lookup that started before an invalidation is not stored (generation
 * check), so an answer read before a change cannot outlive the notification of
 * that change.
 */
@Injectable()
export class SessionCache implements OnApplicationShutdown {
  private readonly logger = new Logger(SessionCache.name);
  /**
   * Checked sessions by `checkKey`, each until the TTL or the session's end if
   * sooner (lru-cache's `ttl`, on the wall clock the session's end is stated
   * in). One cache for all users rather than one per user: an lru-cache holds
   * about 3 KB even when nearly empty.
   */
  private readonly checked = new LRUCache<string, AuthenticatedUser>({
    max: CHECKS_KEPT,
    perf: Date,
    ttlResolution: 0,
    dispose: (user, key) => this.unindex(user.id, key),
  });
  /** The keys in `checked` of each user, so that a user's checks can be dropped together. */
  private readonly keysByUser = new Map<string, Set<string>>();
  private readonly watchers = new Set<UserAuthWatcher>();
  private readonly listener: PgListener;
  private generation = 0;
  private listening = false;
  private started = false;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly sessions: Sessions,
  ) {
    this.listener = new PgListener(
      config.databaseUrl,
      USER_AUTH_CHANNEL,
      (payload) => {
        // No payload: the (re)connect call, handled by `connected`.
        if (!payload) return;
        this.forgetUser(payload);
        this.tell(payload);
      },
      this.logger,
      {
        connected: () => {
          // Changes made before LISTEN took effect were not announced to us: start from nothing.
          this.forgetAll();
          this.listening = true;
          this.tell(null);
        },
        lost: () => {
          this.listening = false;
          this.forgetAll();
          this.logger.warn('session cache listener lost; checking every session in PostgreSQL until it is back');
        },
      },
    );
  }

  /** As `Sessions.resolve`, answered from memory while a recent check stands. */
  async resolve(userId: string, sessionId: string): Promise<AuthenticatedUser | null> {
    if (this.listening) {
      const known = this.checked.get(checkKey(userId, sessionId));
      if (known) return known;
    } else {
      this.listen();
    }
    const generation = this.generation;
    const found = await this.sessions.check(userId, sessionId);
    if (found && this.listening && generation === this.generation) {
      const now = Date.now();
      // lru-cache calls an entry stale once its age exceeds its TTL: the last millisecond the check stands is one before its end.
      const ttl = Math.min(SESSION_CHECK_TTL_MS, found.expiresAt.getTime() - now) - 1;
      if (ttl >= 1) {
        const key = checkKey(userId, sessionId);
        this.checked.set(key, found.user, { ttl, start: now });
        let keys = this.keysByUser.get(userId);
        if (!keys) this.keysByUser.set(userId, (keys = new Set()));
        keys.add(key);
      }
    }
    return found?.user ?? null;
  }

  /** Whether checks are being remembered (the listening connection is up). */
  get remembering(): boolean {
    return this.listening;
  }

  /**
   * Calls `watcher` after the cache has dropped a user on a `user_auth_changed`
   * notification (from any process, this one included), with that user's id;
   * and with null when the listening connection (re)starts, since changes made
   * while it was down were not announced. Long-lived holders of a session (the
   * gateway's sockets) re-check it then, so a revocation reaches them on every
   * instance. Starts listening at once rather than at the first lookup.
   * Returns a function that stops watching.
   */
  watch(watcher: UserAuthWatcher): () => void {
    this.watchers.add(watcher);
    this.listen();
    return () => this.watchers.delete(watcher);
  }

  /** Drops what this process remembers about a user; call after committing a change to their sessions, tier, profile or soul. */
  forgetUser(userId: string): void {
    this.generation += 1;
    const keys = this.keysByUser.get(userId);
    if (keys) for (const key of [...keys]) this.checked.delete(key);
  }

  async onApplicationShutdown(): Promise<void> {
    this.listening = false;
    await this.listener.stop();
  }

  private tell(userId: string | null): void {
    for (const watcher of this.watchers) {
      try {
        watcher(userId);
      } catch (error) {
        this.logger.error({ err: error }, 'user auth watcher failed');
      }
    }
  }

  private forgetAll(): void {
    this.generation += 1;
    this.checked.clear();
    this.keysByUser.clear();
  }

  /** Called by the cache whenever an entry leaves it (deleted, replaced, evicted or expired). */
  private unindex(userId: string, key: string): void {
    const keys = this.keysByUser.get(userId);
    if (!keys) return;
    keys.delete(key);
    if (keys.size === 0) this.keysByUser.delete(userId);
  }

  /** Starts the listening connection, lazily: only processes that check user sessions need it. It then reconnects by itself. */
  private listen(): void {
    if (this.started) return;
    this.started = true;
    void this.listener.start();
  }
}

/** Session ids are unique, but a check answers for the user it was made for only. */
function checkKey(userId: string, sessionId: string): string {
  return `${userId} ${sessionId}`;
}
