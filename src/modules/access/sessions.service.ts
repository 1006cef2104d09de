import { Injectable } from '@nestjs/common';
import { newId } from '../../common/ids';
import type { Tx } from '../../infra/database/sql-repository';
import { AuthenticatedUser } from './authenticated-user';
import { SessionEntity } from './entities/session.entity';
import { SessionsRepository } from './sessions.repository';

/** Sessions behind access tokens: created at login, checked on every request, revoked at logout. */
@Injectable()
export class Sessions {
  constructor(private readonly sessions: SessionsRepository) {}

  async open(tx: Tx, userId: string, expiresAt: Date): Promise<SessionEntity> {
    return this.sessions.insert(tx, { id: newId('ses'), userId, expiresAt });
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
    const live = await this.sessions.findLive(userId, sessionId);
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

  /** Drops sessions that ended more than a day ago (called by the retention job). */
  async purgeEnded(): Promise<number> {
    return this.sessions.deleteEndedOverADayAgo();
  }
}
