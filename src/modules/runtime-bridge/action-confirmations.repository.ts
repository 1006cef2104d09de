import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';

/** An `action_confirmations` row with its package's name, as the confirmation service answers it. */
export interface ConfirmationRow {
  id: string;
  install_id: string;
  user_id: string;
  package_id: string;
  capability: string;
  input: Record<string, unknown>;
  input_hash: string;
  idempotency_key: string;
  request_id: string;
  status: 'pending' | 'executing' | 'completed' | 'failed' | 'cancelled' | 'expired';
  result: Record<string, unknown> | null;
  message: string | null;
  error: Record<string, unknown> | null;
  created_at: Date;
  expires_at: Date;
  decided_at: Date | null;
  package_name: string | null;
  started_by: 'user' | 'app';
}

/** A confirmation to create (pending until `lifetimeMinutes` from now). */
export interface NewConfirmation {
  id: string;
  installId: string;
  userId: string;
  appId: string;
  packageId: string;
  capability: string;
  input: Record<string, unknown>;
  inputHash: string;
  idempotencyKey: string;
  requestId: string;
  lifetimeMinutes: number;
  startedBy: 'user' | 'app';
}

/** What a run left on a confirmation; absent fields keep their value. */
export interface ConfirmationOutcome {
  result?: unknown;
  message?: string | null;
  error?: unknown;
}

const COLUMNS = `id, install_id, user_id, package_id, capability, input, input_hash, idempotency_key, request_id, status, result, message, error,
  created_at, expires_at, decided_at, started_by, (SELECT p.name FROM packages p WHERE p.id = package_id) AS package_name`;

/** The only reader and writer of `action_confirmations` (the package name is read from `packages` in the same statement). */
@Injectable()
export class ActionConfirmationsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** Null when the install already has a confirmation with this idempotency key. */
  async insert(tx: Tx, confirmation: NewConfirmation): Promise<ConfirmationRow | null> {
    return this.first<ConfirmationRow>(
      `INSERT INTO action_confirmations (id, install_id, user_id, app_id, package_id, capability, input, input_hash, idempotency_key, request_id, expires_at, started_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now() + make_interval(mins => $11), $12)
       ON CONFLICT (install_id, idempotency_key) DO NOTHING RETURNING ${COLUMNS}`,
      [
        confirmation.id,
        confirmation.installId,
        confirmation.userId,
        confirmation.appId,
        confirmation.packageId,
        confirmation.capability,
        JSON.stringify(confirmation.input),
        confirmation.inputHash,
        confirmation.idempotencyKey,
        confirmation.requestId,
        confirmation.lifetimeMinutes,
        confirmation.startedBy,
      ],
      tx,
    );
  }

  /** The user's pending confirmations that can still be decided, oldest first. */
  async pendingForUser(userId: string, limit: number): Promise<ConfirmationRow[]> {
    return this.rows<ConfirmationRow>(
      `SELECT ${COLUMNS} FROM action_confirmations
        WHERE user_id = $1 AND status = 'pending' AND expires_at > now()
        ORDER BY created_at, id LIMIT $2`,
      [userId, limit],
    );
  }

  async findByKey(installId: string, idempotencyKey: string): Promise<ConfirmationRow | null> {
    return this.first<ConfirmationRow>(`SELECT ${COLUMNS} FROM action_confirmations WHERE install_id = $1 AND idempotency_key = $2`, [
      installId,
      idempotencyKey,
    ]);
  }

  /** The user's confirmation, locked in the caller's transaction; null when it is someone else's or does not exist. */
  async lockForUser(tx: Tx, id: string, userId: string): Promise<ConfirmationRow | null> {
    return this.first<ConfirmationRow>(
      `SELECT ${COLUMNS} FROM action_confirmations WHERE id = $1 AND user_id = $2 FOR UPDATE`,
      [id, userId],
      tx,
    );
  }

  async markExpired(tx: Tx, id: string): Promise<void> {
    await this.execute(`UPDATE action_confirmations SET status = 'expired', decided_at = now() WHERE id = $1`, [id], tx);
  }

  /** Back to `pending` from `executing`; null when it was no longer executing. */
  async reopen(tx: Tx, id: string): Promise<ConfirmationRow | null> {
    const { rows } = await this.changed<ConfirmationRow>(
      `UPDATE action_confirmations SET status = 'pending', decided_at = NULL WHERE id = $1 AND status = 'executing' RETURNING ${COLUMNS}`,
      [id],
      tx,
    );
    return rows[0] ?? null;
  }

  /** The new status and what the run left; the first decision time is kept. */
  async setStatus(id: string, status: ConfirmationRow['status'], outcome: ConfirmationOutcome = {}, tx?: Tx): Promise<ConfirmationRow> {
    const { rows } = await this.changed<ConfirmationRow>(
      `UPDATE action_confirmations SET status = $2, result = COALESCE($3, result), message = COALESCE($4, message), error = COALESCE($5, error),
              decided_at = COALESCE(decided_at, now()) WHERE id = $1 RETURNING ${COLUMNS}`,
      [
        id,
        status,
        outcome.result === undefined ? null : JSON.stringify(outcome.result),
        outcome.message ?? null,
        outcome.error === undefined ? null : JSON.stringify(outcome.error),
      ],
      tx,
    );
    return rows[0];
  }
}
