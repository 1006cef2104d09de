import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { newId } from '../../common/ids';
import { AuthenticatedUser } from './authenticated-user';
import { SessionEntity } from './entities/session.entity';
import type { UserTier } from './entities/user.entity';

/** Sessions behind access tokens: created at login, checked on every request, revoked at logout. */
@Injectable()
export class Sessions {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async open(manager: EntityManager, userId: string, expiresAt: Date): Promise<SessionEntity> {
    const session = manager.create(SessionEntity, { id: newId('ses'), userId, expiresAt, revokedAt: null });
    return manager.save(session);
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
    const rows: Array<{ tier: UserTier; name: string; email: string | null; created_at: Date; soul_id: string | null; expires_at: Date }> =
      await this.dataSource.query(
        `SELECT u.tier, u.name, u.email, u.created_at, so.id AS soul_id, s.expires_at
           FROM sessions s JOIN users u ON u.id = s.user_id LEFT JOIN souls so ON so.user_id = u.id
          WHERE s.id = $1 AND s.user_id = $2 AND s.revoked_at IS NULL AND s.expires_at > now()`,
        [sessionId, userId],
      );
    if (rows.length !== 1) return null;
    const [row] = rows;
    return {
      user: {
        id: userId,
        sessionId,
        tier: row.tier,
        profile: { name: row.name, email: row.email, createdAt: row.created_at, soulId: row.soul_id },
      },
      expiresAt: row.expires_at,
    };
  }

  async revoke(sessionId: string): Promise<void> {
    await this.dataSource.query(`UPDATE sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [sessionId]);
  }

  /** Drops sessions that ended more than a day ago (called by the retention job). */
  async purgeEnded(): Promise<number> {
    const [, count]: [unknown, number] = await this.dataSource.query(
      `DELETE FROM sessions WHERE expires_at < now() - interval '1 day' OR revoked_at < now() - interval '1 day'`,
    );
    return count;
  }
}
