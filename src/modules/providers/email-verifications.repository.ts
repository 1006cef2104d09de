import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';

/** A verification link as the verify step judges it. */
export interface EmailVerificationRow {
  id: string;
  developer_id: string;
  expired: boolean;
  used_at: Date | null;
  invalidated_at: Date | null;
}

/** The `email_verifications` table: single-use links that verify a developer's email address. */
@Injectable()
export class EmailVerificationsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  async insert(tx: Tx, link: { id: string; developerId: string; tokenHash: string; lifetimeHours: number }): Promise<void> {
    await this.execute(
      `INSERT INTO email_verifications (id, developer_id, token_hash, expires_at) VALUES ($1, $2, $3, now() + make_interval(hours => $4))`,
      [link.id, link.developerId, link.tokenHash, link.lifetimeHours],
      tx,
    );
  }

  /** The link with this token hash, locked until the end of `tx`. */
  findForUpdate(tx: Tx, tokenHash: string): Promise<EmailVerificationRow | null> {
    return this.first<EmailVerificationRow>(
      `SELECT id, developer_id, expires_at < now() AS expired, used_at, invalidated_at FROM email_verifications WHERE token_hash = $1 FOR UPDATE`,
      [tokenHash],
      tx,
    );
  }

  async markUsed(tx: Tx, id: string): Promise<void> {
    await this.changed(`UPDATE email_verifications SET used_at = now() WHERE id = $1`, [id], tx);
  }

  /** Ends the developer's unused links (a new one replaces them). */
  async invalidateOpen(tx: Tx, developerId: string): Promise<void> {
    await this.changed(
      `UPDATE email_verifications SET invalidated_at = now() WHERE developer_id = $1 AND used_at IS NULL AND invalidated_at IS NULL`,
      [developerId],
      tx,
    );
  }
}
