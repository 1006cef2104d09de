import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';

/** A reset link as the confirm step judges it. */
export interface PasswordResetRow {
  id: string;
  developer_id: string;
  expired: boolean;
  used_at: Date | null;
  invalidated_at: Date | null;
}

/** The `password_resets` table: single-use links that set a new developer password, stored as hashes. */
@Injectable()
export class PasswordResetsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** Inserts the link; false when a link with this id exists already (a retried job). */
  async insertUnlessExists(
    tx: Tx,
    link: { id: string; developerId: string; tokenHash: string; lifetimeMinutes: number },
  ): Promise<boolean> {
    const { rows } = await this.changed<{ id: string }>(
      `INSERT INTO password_resets (id, developer_id, token_hash, expires_at) VALUES ($1, $2, $3, now() + make_interval(mins => $4))
       ON CONFLICT (id) DO NOTHING RETURNING id`,
      [link.id, link.developerId, link.tokenHash, link.lifetimeMinutes],
      tx,
    );
    return rows.length === 1;
  }

  /** The link with this token hash, locked until the end of `tx` (concurrent confirmations of one link queue here). */
  findForUpdate(tx: Tx, tokenHash: string): Promise<PasswordResetRow | null> {
    return this.first<PasswordResetRow>(
      `SELECT id, developer_id, expires_at < now() AS expired, used_at, invalidated_at FROM password_resets WHERE token_hash = $1 FOR UPDATE`,
      [tokenHash],
      tx,
    );
  }

  /** Marks the link used; false when it already was (or was invalidated) meanwhile. */
  async markUsed(tx: Tx, id: string): Promise<boolean> {
    const { rows } = await this.changed<{ id: string }>(
      `UPDATE password_resets SET used_at = now() WHERE id = $1 AND used_at IS NULL AND invalidated_at IS NULL RETURNING id`,
      [id],
      tx,
    );
    return rows.length === 1;
  }

  /** Ends the developer's unused links but `keepId`: a newer link, or a completed reset, replaces them. */
  async invalidateOpen(tx: Tx, developerId: string, keepId: string | null = null): Promise<void> {
    await this.changed(
      `UPDATE password_resets SET invalidated_at = now()
        WHERE developer_id = $1 AND used_at IS NULL AND invalidated_at IS NULL AND id IS DISTINCT FROM $2`,
      [developerId, keepId],
      tx,
    );
  }
}
