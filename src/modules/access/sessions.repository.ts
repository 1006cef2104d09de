import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import type { UserTier } from './authenticated-user';
import { SessionEntity } from './entities/session.entity';

/** A live session with its user's tier and the profile fields `/v1/me` shows. */
export interface LiveSession {
  tier: UserTier;
  name: string;
  email: string | null;
  createdAt: Date;
  soulId: string | null;
  expiresAt: Date;
}

interface LiveSessionRow {
  tier: UserTier;
  name: string;
  email: string | null;
  created_at: Date;
  soul_id: string | null;
  expires_at: Date;
}

/** The `sessions` table: one row per user login. */
@Injectable()
export class SessionsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  async insert(tx: Tx, session: { id: string; userId: string; expiresAt: Date }): Promise<SessionEntity> {
    const repository = this.db(tx).getRepository(SessionEntity);
    return repository.save(repository.create({ ...session, revokedAt: null }));
  }

  /**
   * The session when it is live (not revoked, not expired) and its user
   * exists: one round trip for the session, its user and the user's soul.
   */
  async findLive(userId: string, sessionId: string): Promise<LiveSession | null> {
    const rows = await this.rows<LiveSessionRow>(
      `SELECT u.tier, u.name, u.email, u.created_at, so.id AS soul_id, s.expires_at
         FROM sessions s JOIN users u ON u.id = s.user_id LEFT JOIN souls so ON so.user_id = u.id
        WHERE s.id = $1 AND s.user_id = $2 AND s.revoked_at IS NULL AND s.expires_at > now()`,
      [sessionId, userId],
    );
    if (rows.length !== 1) return null;
    const [row] = rows;
    return { tier: row.tier, name: row.name, email: row.email, createdAt: row.created_at, soulId: row.soul_id, expiresAt: row.expires_at };
  }

  async revoke(sessionId: string): Promise<void> {
    await this.changed(`UPDATE sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [sessionId]);
  }

  /** Deletes sessions that ended more than a day ago; answers how many. */
  async deleteEndedOverADayAgo(): Promise<number> {
    const { count } = await this.changed(
      `DELETE FROM sessions WHERE expires_at < now() - interval '1 day' OR revoked_at < now() - interval '1 day'`,
    );
    return count;
  }
}
