import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { NotifiedCache } from '../../infra/database/notified-cache';
import { CacheFence } from '../../infra/realtime/cache-fence';
import { AuthenticatedUser } from './authenticated-user';
import { Sessions } from './sessions.service';

/** PostgreSQL channel on which triggers announce changes to a user's sessions, tier, profile or soul (payload: user id). */
export const USER_AUTH_CHANNEL = 'user_auth_changed';
/** Longest a checked session is trusted without asking PostgreSQL again, in case a notification went missing. */
export const SESSION_CHECK_TTL_MS = 10_000;
/** Checked sessions remembered per process. */
const CHECKS_KEPT = 50_000;

/** Told the user id of every announced change, or null when changes may have gone unannounced (see `SessionCache.watch`). */
export type UserAuthWatcher = (userId: string | null) => void;

/**
 * The session check of every user API request (session live, user present,
 * tier and profile), remembered in this process for up to
 * `SESSION_CHECK_TTL_MS` (a `NotifiedCache` keyed by user and session, owned
 * by the user). Entries are dropped at once by the code that changes what
 * they hold (logout, login, tier change, soul deletion) after its transaction
 * commits, in every process when the `user_auth_changed` notification arrives,
 * and all of them when the listening connection is lost. A revocation waits
 * for the other processes before it answers (`forgetUserEverywhere`).
 */
@Injectable()
export class SessionCache implements OnApplicationShutdown {
  private readonly logger = new Logger(SessionCache.name);
  private readonly checked: NotifiedCache<AuthenticatedUser>;
  private readonly watchers = new Set<UserAuthWatcher>();

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly sessions: Sessions,
    fence: CacheFence,
  ) {
    this.checked = new NotifiedCache({
      databaseUrl: config.databaseUrl,
      channel: USER_AUTH_CHANNEL,
      ttlMs: SESSION_CHECK_TTL_MS,
      max: CHECKS_KEPT,
      logger: this.logger,
      onChange: (userId) => this.tell(userId),
      fence,
    });
  }

  /** As `Sessions.resolve`, answered from memory while a recent check stands. */
  resolve(userId: string, sessionId: string): Promise<AuthenticatedUser | null> {
    return this.checked.get(checkKey(userId, sessionId), userId, async () => {
      const found = await this.sessions.check(userId, sessionId);
      // Trusted no longer than the session lasts.
      return found ? { value: found.user, ttlMs: found.expiresAt.getTime() - Date.now() } : null;
    });
  }

  /** A standing check of this session, at once; undefined when none stands (then `resolve` checks it). */
  recall(userId: string, sessionId: string): AuthenticatedUser | undefined {
    return this.checked.peek(checkKey(userId, sessionId));
  }

  /** Whether checks are being remembered (the listening connection is up). */
  get remembering(): boolean {
    return this.checked.remembering;
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
    this.checked.listen();
    return () => this.watchers.delete(watcher);
  }

  /** Drops what this process remembers about a user; call after committing a change to their sessions, tier, profile or soul. */
  forgetUser(userId: string): void {
    this.checked.forgetOwner(userId);
  }

  /**
   * As `forgetUser`, and resolves once every instance has dropped the user
   * too (and closed or re-checked their sockets): for a revocation, awaited
   * before the answer, so that the revoked session is refused everywhere from
   * the moment the client hears it was revoked (see `CacheFence`).
   */
  async forgetUserEverywhere(userId: string): Promise<void> {
    this.checked.forgetOwner(userId);
    await this.checked.fence();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.checked.stop();
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
}

/** Session ids are unique, but a check answers for the user it was made for only. */
function checkKey(userId: string, sessionId: string): string {
  return `${userId} ${sessionId}`;
}
