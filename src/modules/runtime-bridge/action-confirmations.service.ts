import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { ProblemError } from '../../common/errors/problem-error';
import { isId, newId } from '../../common/ids';
import type { ExecutionTarget } from '../marketplace/installs.service';
import { CapabilityDescriptor } from '../packages/capability-descriptor';

/** How long a user has to confirm an action before it lapses. */
export const CONFIRMATION_LIFETIME_MINUTES = 15;

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
}

/** Canonical JSON (sorted keys) so the same input always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

export function toConfirmationDto(row: ConfirmationRow) {
  return {
    confirmationId: row.id,
    requestId: row.request_id,
    packageId: row.package_id,
    installId: row.install_id,
    capability: row.capability,
    input: row.input,
    idempotencyKey: row.idempotency_key,
    status: row.status === 'pending' ? 'pending_confirmation' : row.status,
    result: row.result,
    message: row.message,
    error: row.error,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    decidedAt: row.decided_at?.toISOString() ?? null,
    confirmUrl: `/v1/actions/${row.id}/confirm`,
    cancelUrl: `/v1/actions/${row.id}/cancel`,
  };
}

const COLUMNS =
  'id, install_id, user_id, package_id, capability, input, input_hash, idempotency_key, request_id, status, result, message, error, created_at, expires_at, decided_at';

/**
 * Pending confirmations of `action` capabilities: an action never reaches the
 * runtime until its user confirms. The idempotency key is fixed when the
 * confirmation is created: re-using a key with the same input answers the
 * same confirmation (and its stored result); with other input it is a conflict.
 */
@Injectable()
export class ActionConfirmations {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async create(requestId: string, target: ExecutionTarget, capability: CapabilityDescriptor, input: Record<string, unknown>, key?: string) {
    const inputHash = createHash('sha256').update(canonical(input)).digest('hex');
    const idempotencyKey = key ?? newId('idem');
    const [inserted]: ConfirmationRow[] = await this.dataSource.query(
      `INSERT INTO action_confirmations (id, install_id, user_id, app_id, package_id, capability, input, input_hash, idempotency_key, request_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now() + make_interval(mins => $11))
       ON CONFLICT (install_id, idempotency_key) DO NOTHING RETURNING ${COLUMNS}`,
      [
        newId('conf'),
        target.install_id,
        target.user_id,
        target.app_id,
        target.package_id,
        capability.name,
        JSON.stringify(input),
        inputHash,
        idempotencyKey,
        requestId,
        CONFIRMATION_LIFETIME_MINUTES,
      ],
    );
    if (inserted) return toConfirmationDto(inserted);
    const [existing]: ConfirmationRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM action_confirmations WHERE install_id = $1 AND idempotency_key = $2`,
      [target.install_id, idempotencyKey],
    );
    if (existing.capability !== capability.name || existing.input_hash !== inputHash) {
      throw new ProblemError('conflict', `Idempotency key ${idempotencyKey} was already used with different parameters`, {
        runtime_error: { code: 'CONFLICT' },
      });
    }
    return toConfirmationDto(existing);
  }

  /** The user's confirmation, locked for the decision. Someone else's is not found. */
  async lockOwned(manager: EntityManager, userId: string, confirmationId: string): Promise<ConfirmationRow> {
    const [row]: ConfirmationRow[] = isId(confirmationId, 'conf')
      ? await manager.query(`SELECT ${COLUMNS} FROM action_confirmations WHERE id = $1 AND user_id = $2 FOR UPDATE`, [
          confirmationId,
          userId,
        ])
      : [];
    if (!row) throw new ApiError('NOT_FOUND', `No confirmation ${confirmationId}`);
    if (row.status === 'pending' && row.expires_at.getTime() < Date.now()) {
      await manager.query(`UPDATE action_confirmations SET status = 'expired', decided_at = now() WHERE id = $1`, [row.id]);
      row.status = 'expired';
    }
    return row;
  }

  async setStatus(
    manager: EntityManager | DataSource,
    id: string,
    status: ConfirmationRow['status'],
    outcome: { result?: unknown; message?: string | null; error?: unknown } = {},
  ): Promise<ConfirmationRow> {
    const [rows]: [ConfirmationRow[]] = await manager.query(
      `UPDATE action_confirmations SET status = $2, result = COALESCE($3, result), message = COALESCE($4, message), error = COALESCE($5, error),
              decided_at = COALESCE(decided_at, now()) WHERE id = $1 RETURNING ${COLUMNS}`,
      [
        id,
        status,
        outcome.result === undefined ? null : JSON.stringify(outcome.result),
        outcome.message ?? null,
        outcome.error === undefined ? null : JSON.stringify(outcome.error),
      ],
    );
    return rows[0];
  }
}
