import { Injectable } from '@nestjs/common';
import { newId } from '../../common/ids';
import type { Tx } from '../../infra/database/sql-repository';
import { StatementBatch } from '../../infra/database/statement-batch';
import { AuthenticatedUser } from './authenticated-user';
import { SessionEntity } from './entities/session.entity';
import type { SessionClient } from './session-client';
import { ListedSession, LiveSession, SessionsRepository } from './sessions.repository';

/** Most session checks one statement makes; more wait for the next. */
const MAX_CHECKS_PER_STATEMENT = 500;

/**
 * Sessions behind access tokens: created at login, checked on every request,
 * listed and revoked by their user (one, all, or at logout). Callers that
 * revoke drop the user from the session cache after their commit; the
 * `user_auth_changed` trigger tells the other instances.
 */
@Injectable()
export class Sessions {
  /** Session checks waiting for the next statement (this turn of the event loop, or while one runs). */
  private readonly checks = new StatementBatch<{ userId: string; sessionId: string }, LiveSession | null>(
    (asked) => this.sessions.findLiveMany(asked),
    MAX_CHECKS_PER_STATEMENT,
  );

  constructor(private readonly sessions: SessionsRepository) {}

  async open(tx: Tx, userId: string, expiresAt: Date, client: SessionClient): Promise<SessionEntity> {
    return this.sessions.insert(tx, { id: newId('ses'), userId, expiresAt, client });
  }

  /** The user behind a live session, or null when the session is revoked, expired or its user is gone. */
  async resolve(userId: string, sessionId: string): Promise<AuthenticatedUser | null> {
    return (await this.check(userId, sessionId))?.user ?? null;
  }

  /**
   * `resolve`, with the session's end: one round trip for the session, its user
   * and the profile fields `/v1/me` shows.
   */
  async check(userId: string, sessionId: string): Promise<{ user: AuthenticatedUser; expiresAt: Date } | null> {
    const live = await this.checks.add({ userId, sessionId });
    if (!live) return null;
    return {
      user: {
        id: userId,
        sessionId,
        tier: live.tier,
        profile: { name: live.name, email: live.email, createdAt: live.createdAt, soulId: live.soulId },
      },
      expiresAt: live.expiresAt,
    };
  }

  async revoke(sessionId: string): Promise<void> {
    await this.sessions.revoke(sessionId);
  }

  listLive(userId: string, after: { at: string; id: string } | null, limit: number): Promise<ListedSession[]> {
    return this.sessions.listLive(userId, after, limit);
  }

  /** Whether the user had this live session (now revoked). */
  revokeOwned(userId: string, sessionId: string): Promise<boolean> {
    return this.sessions.revokeOwned(userId, sessionId);
  }

  /** Revokes every live session of the user but `exceptId`, in the caller's transaction when given; answers how many. */
  revokeAllOf(tx: Tx | undefined, userId: string, exceptId: string | null): Promise<number> {
    return this.sessions.revokeAllOf(tx, userId, exceptId);
  }

  /** Drops sessions that ended more than a day ago (called by the retention job). */
  async purgeEnded(): Promise<number> {
    return this.sessions.deleteEndedOverADayAgo();
  }
}
