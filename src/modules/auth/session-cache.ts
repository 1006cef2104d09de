import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Client } from 'pg';
import { LruMap } from '../../common/cache/lru-map';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { AuthenticatedUser } from './authenticated-user';
import { Sessions } from './sessions.service';

/** PostgreSQL channel on which triggers announce changes to a user's sessions, tier, profile or soul (payload: user id). */
export const USER_AUTH_CHANNEL = 'user_auth_changed';
/** Longest a checked session is trusted without asking PostgreSQL again, in case a notification went missing. */
export const SESSION_CHECK_TTL_MS = 10_000;
const USERS_KEPT = 20_000;
const SESSIONS_KEPT_PER_USER = 32;
const RECONNECT_AFTER_MS = 1_000;

/** Told the user id of every announced change, or null when changes may have gone unannounced (see `SessionCache.watch`). */
export type UserAuthWatcher = (userId: string | null) => void;

interface CheckedSession {
  user: AuthenticatedUser;
  /** Epoch ms until which the check stands: the TTL, or the session's end if sooner. */
  until: number;
}

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
 * - all of them, when the listening connection is lost; until it is back, every
 *   request asks PostgreSQL.
 *
 * A lookup that started before an invalidation is not stored (generation
 * check), so an answer read before a change cannot outlive the notification of
 * that change.
 */
@Injectable()
export class SessionCache implements OnApplicationShutdown {
  private readonly logger = new Logger(SessionCache.name);
  private readonly users = new LruMap<string, Map<string, CheckedSession>>(USERS_KEPT);
  private readonly watchers = new Set<UserAuthWatcher>();
  private generation = 0;
  private listener: Client | null = null;
  private listening = false;
  private connecting = false;
  private nextAttemptAt = 0;
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sessions: Sessions,
  ) {}

  /** As `Sessions.resolve`, answered from memory while a recent check stands. */
  async resolve(userId: string, sessionId: string): Promise<AuthenticatedUser | null> {
    const now = Date.now();
    if (this.listening) {
      const known = this.users.get(userId)?.get(sessionId);
      if (known && known.until > now) return known.user;
    } else {
      this.listen();
    }
    const generation = this.generation;
    const found = await this.sessions.check(userId, sessionId);
    if (found && this.listening && generation === this.generation) {
      let checked = this.users.get(userId);
      if (!checked) {
        checked = new Map();
        this.users.set(userId, checked);
      }
      if (checked.size >= SESSIONS_KEPT_PER_USER) {
        for (const [id, entry] of checked) if (entry.until <= now) checked.delete(id);
        if (checked.size >= SESSIONS_KEPT_PER_USER) checked.clear();
      }
      checked.set(sessionId, { user: found.user, until: Math.min(now + SESSION_CHECK_TTL_MS, found.expiresAt.getTime()) });
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
    this.users.delete(userId);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.listening = false;
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => undefined);
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
    this.users.clear();
  }

  /** Opens the listening connection (lazily: only processes that check user sessions need it), at most once a second. */
  private listen(): void {
    if (this.listening || this.connecting || this.stopped || Date.now() < this.nextAttemptAt) return;
    this.connecting = true;
    this.nextAttemptAt = Date.now() + RECONNECT_AFTER_MS;
    const client = new Client({ connectionString: this.config.databaseUrl, keepAlive: true });
    const lost = (why: string) => {
      if (this.listener !== client) return;
      this.listener = null;
      this.listening = false;
      this.forgetAll();
      if (!this.stopped) this.logger.warn(`session cache listener lost (${why}); checking every session in PostgreSQL until it is back`);
      void client.end().catch(() => undefined);
    };
    client.on('notification', (message) => {
      if (!message.payload) return;
      this.forgetUser(message.payload);
      this.tell(message.payload);
    });
    client.on('error', (error) => lost(error.message));
    client.on('end', () => lost('connection closed'));
    client
      .connect()
      .then(() => client.query(`LISTEN ${USER_AUTH_CHANNEL}`))
      .then(async () => {
        if (this.stopped) return void (await client.end());
        this.listener = client;
        // Changes made before LISTEN took effect were not announced to us: start from nothing.
        this.forgetAll();
        this.listening = true;
        this.tell(null);
      })
      .catch(async (error: Error) => {
        this.logger.warn(`session cache listener could not connect: ${error.message}`);
        await client.end().catch(() => undefined);
      })
      .finally(() => {
        this.connecting = false;
      });
  }
}
