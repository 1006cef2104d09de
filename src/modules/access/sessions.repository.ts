import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import type { UserTier } from './authenticated-user';
import { SessionEntity } from './entities/session.entity';
import type { SessionClient } from './session-client';

/** How stale `last_used_at` may be: the session check writes it at most this often per session. */
export const LAST_USED_PRECISION_SECONDS = 60;

/** A live session as the user's session list shows it; `at` is `created_at` to the microsecond, for the cursor. */
export interface ListedSession {
  id: string;
  createdAt: Date;
  lastUsedAt: Date;
  expiresAt: Date;
  userAgent: string | null;
  ipAddress: string | null;
  at: string;
}

interface ListedSessionRow {
  id: string;
  created_at: Date;
  last_used_at: Date;
  expires_at: Date;
  user_agent: string | null;
  ip_address: string | null;
  at: string;
}

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

  async insert(tx: Tx, session: { id: string; userId: string; expiresAt: Date; client: SessionClient }): Promise<SessionEntity> {
    const repository = this.db(tx).getRepository(SessionEntity);
    const { client, ...fields } = session;
    return repository.save(repository.create({ ...fields, ...client, revokedAt: null }));
  }

  /**
   * For each asked session, the session when it is live (not revoked, not
   * expired) and its user exists, else null, in order: one statement for the
   * sessions, their users and their souls (the session checks of one turn of
   * the event loop, see `Sessions.check`). The same statement moves a
   * session's `last_used_at` to now when it is over
   * `LAST_USED_PRECISION_SECONDS` old: the check runs only when the session
   * cache (re)checks the session, so this costs no round trip and writes a
   * session's row at most once a minute. It moves only rows no other
   * statement holds (`SKIP LOCKED`): the time is a hint, and two instances
   * touching overlapping sessions must neither wait for each other nor
   * deadlock.
   */
  async findLiveMany(asked: Array<{ userId: string; sessionId: string }>): Promise<Array<LiveSession | null>> {
    const rows = await this.prepared<LiveSessionRow & { session_id: string; user_id: string }>(
      'sessions_find_live_many',
      `WITH asked AS (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS a(session_id, user_id)),
       touched AS (
         UPDATE sessions SET last_used_at = now()
          WHERE id IN (SELECT s.id FROM sessions s JOIN asked a ON s.id = a.session_id AND s.user_id = a.user_id
                        WHERE s.revoked_at IS NULL AND s.expires_at > now() AND s.last_used_at < now() - make_interval(secs => $3)
                        ORDER BY s.id FOR UPDATE OF s SKIP LOCKED))
       SELECT s.id AS session_id, s.user_id, u.tier, u.name, u.email, u.created_at, so.id AS soul_id, s.expires_at
         FROM asked a JOIN sessions s ON s.id = a.session_id AND s.user_id = a.user_id
         JOIN users u ON u.id = s.user_id LEFT JOIN souls so ON so.user_id = u.id
        WHERE s.revoked_at IS NULL AND s.expires_at > now()`,
      [asked.map((a) => a.sessionId), asked.map((a) => a.userId), LAST_USED_PRECISION_SECONDS],
    );
    const live = new Map(rows.map((row) => [`${row.user_id} ${row.session_id}`, row]));
    return asked.map(({ userId, sessionId }) => {
      const row = live.get(`${userId} ${sessionId}`);
      return row
        ? { tier: row.tier, name: row.name, email: row.email, createdAt: row.created_at, soulId: row.soul_id, expiresAt: row.expires_at }
        : null;
    });
  }

  async revoke(sessionId: string): Promise<void> {
    await this.changed(`UPDATE sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [sessionId]);
  }

  /** A page of the user's live sessions, newest first, after the keyset position `after` (none: from the start). */
  async listLive(userId: string, after: { at: string; id: string } | null, limit: number): Promise<ListedSession[]> {
    const rows = await this.rows<ListedSessionRow>(
      `SELECT id, created_at, last_used_at, expires_at, user_agent, ip_address, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at
         FROM sessions
        WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > now()
          AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::text))
        ORDER BY created_at DESC, id DESC
        LIMIT $4`,
      [userId, after?.at ?? null, after?.id ?? null, limit],
    );
    return rows.map((row) => ({
      id: row.id,
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
      expiresAt: row.expires_at,
      userAgent: row.user_agent,
      ipAddress: row.ip_address,
      at: row.at,
    }));
  }

  /** Revokes one live session of the user; false when the user has no such live session. */
  async revokeOwned(userId: string, sessionId: string): Promise<boolean> {
    const { count } = await this.changed(
      `UPDATE sessions SET revoked_at = now() WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL AND expires_at > now()`,
      [sessionId, userId],
    );
    return count === 1;
  }

  /** Revokes every live session of the user, but `exceptId` when given, in `tx` when given; answers how many. */
  async revokeAllOf(tx: Tx | undefined, userId: string, exceptId: string | null): Promise<number> {
    const { count } = await this.changed(
      `UPDATE sessions SET revoked_at = now()
        WHERE user_id = $1 AND revoked_at IS NULL AND expires_at > now() AND ($2::text IS NULL OR id <> $2::text)`,
      [userId, exceptId],
      tx,
    );
    return count;
  }

  /** Deletes sessions that ended more than a day ago; answers how many. */
  async deleteEndedOverADayAgo(): Promise<number> {
    const { count } = await this.changed(
      `DELETE FROM sessions WHERE expires_at < now() - interval '1 day' OR revoked_at < now() - interval '1 day'`,
    );
    return count;
  }
}
