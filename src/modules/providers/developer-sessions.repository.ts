import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import type { PlatformStanding } from './auth/platform-access';

/** The `developer_sessions` table: developer console logins. */
@Injectable()
export class DeveloperSessionsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  async insert(session: { id: string; developerId: string; expiresAt: Date }): Promise<void> {
    await this.execute(`INSERT INTO developer_sessions (id, developer_id, expires_at) VALUES ($1, $2, $3)`, [
      session.id,
      session.developerId,
      session.expiresAt,
    ]);
  }

  async revoke(sessionId: string): Promise<void> {
    await this.changed(`UPDATE developer_sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [sessionId]);
  }

  /**
   * Ends every live console session of the developer (a password reset). Console
   * tokens are checked against their session on every call, so they are refused
   * at once on every instance when `tx` commits. Returns how many ended.
   */
  async revokeAllForDeveloper(tx: Tx, developerId: string): Promise<number> {
    const { count } = await this.changed(
      `UPDATE developer_sessions SET revoked_at = now() WHERE developer_id = $1 AND revoked_at IS NULL`,
      [developerId],
      tx,
    );
    return count;
  }

  /** What a console token stands on: its developer, while the session is live. Null: nothing any more. */
  standing(developerId: string, sessionId: string): Promise<PlatformStanding | null> {
    return this.first<PlatformStanding>(
      `SELECT d.status, d.email_verified_at FROM developers d
         JOIN developer_sessions s ON s.developer_id = d.id AND s.id = $2 AND s.revoked_at IS NULL AND s.expires_at > now()
        WHERE d.id = $1`,
      [developerId, sessionId],
    );
  }
}
