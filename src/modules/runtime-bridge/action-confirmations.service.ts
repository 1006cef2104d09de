import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { ProblemError } from '../../common/errors/problem-error';
import { isId, newId } from '../../common/ids';
import { DomainEvents } from '../events/domain-events';
import type { ExecutionTarget } from '../marketplace/installs.service';
import { CapabilityDescriptor } from '../packages/capability-descriptor';

/** How long a user has to confirm an action before it lapses. */
export const CONFIRMATION_LIFETIME_MINUTES = 15;
/** Outbox event of a new pending confirmation; the worker tells the user's sessions (`action.pending`). */
export const CONFIRMATION_REQUESTED = 'action.confirmation_requested';
/** Outbox event of a decision (confirm claimed it, or cancel); the worker tells the user's sessions (`action.decided`). */
export const CONFIRMATION_DECIDED = 'action.confirmation_decided';
/** Most pending confirmations listed at once (they lapse after CONFIRMATION_LIFETIME_MINUTES). */
export const PENDING_LIST_LIMIT = 100;

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
    packageName: row.package_name,
    startedBy: row.started_by,
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

const COLUMNS = `id, install_id, user_id, package_id, capability, input, input_hash, idempotency_key, request_id, status, result, message, error,
  created_at, expires_at, decided_at, started_by, (SELECT p.name FROM packages p WHERE p.id = package_id) AS package_name`;

/**
 * Pending confirmations of `action` capabilities: an action never reaches the
 * runtime until its user confirms. The idempotency key is fixed when the
 * confirmation is created: re-using a key with the same input answers the
 * same confirmation (and its stored result); with other input it is a conflict.
 */
@Injectable()
export class ActionConfirmations {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: DomainEvents,
  ) {}

  /**
   * A new confirmation commits with its outbox event, so the user hears of
   * every one (an action an app started has no other way to reach them).
   */
  async create(
    requestId: string,
    target: ExecutionTarget,
    capability: CapabilityDescriptor,
    input: Record<string, unknown>,
    key?: string,
    /** `app`: an app token (its own, or one delegated by the install); the user has no dialog open for it. */
    startedBy: 'user' | 'app' = 'user',
  ) {
    const inserted = await this.dataSource.transaction(async (manager) => {
      const created = await this.insert(manager, requestId, target, capability, input, key, startedBy);
      if (created) {
        await this.events.record(manager, {
          type: CONFIRMATION_REQUESTED,
          payload: { user_id: created.user_id, confirmation: toConfirmationDto(created) },
        });
      }
      return created;
    });
    if (inserted) return toConfirmationDto(inserted);
    // Only a key given by the caller can meet an earlier confirmation (a generated one is new).
    return this.existing(target, capability, input, key!);
  }

  /** The user's pending confirmations that can still be decided, oldest first. */
  async pendingFor(userId: string) {
    const rows: ConfirmationRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM action_confirmations
        WHERE user_id = $1 AND status = 'pending' AND expires_at > now()
        ORDER BY created_at, id LIMIT $2`,
      [userId, PENDING_LIST_LIMIT],
    );
    return { confirmations: rows.map(toConfirmationDto) };
  }

  private async insert(
    manager: EntityManager,
    requestId: string,
    target: ExecutionTarget,
    capability: CapabilityDescriptor,
    input: Record<string, unknown>,
    key: string | undefined,
    startedBy: 'user' | 'app',
  ): Promise<ConfirmationRow | undefined> {
    const inputHash = createHash('sha256').update(canonical(input)).digest('hex');
    const idempotencyKey = key ?? newId('idem');
    const [inserted]: ConfirmationRow[] = await manager.query(
      `INSERT INTO action_confirmations (id, install_id, user_id, app_id, package_id, capability, input, input_hash, idempotency_key, request_id, expires_at, started_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now() + make_interval(mins => $11), $12)
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
        startedBy,
      ],
    );
    return inserted;
  }

  /** The confirmation an earlier request with this idempotency key created; other input under the same key is a conflict. */
  private async existing(
    target: ExecutionTarget,
    capability: CapabilityDescriptor,
    input: Record<string, unknown>,
    idempotencyKey: string,
  ) {
    const inputHash = createHash('sha256').update(canonical(input)).digest('hex');
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

  /**
   * Puts a confirmation whose run failed with a retryable error back to
   * `pending` (the runtime asked to be called later; docs/decisions.md,
   * "Retry-budget rule"), and shows it to the user's sessions again. The same
   * idempotency key goes to the runtime on the next confirm. Null when it was
   * no longer executing.
   */
  async reopen(id: string): Promise<ConfirmationRow | null> {
    return this.dataSource.transaction(async (manager) => {
      const [rows]: [ConfirmationRow[]] = await manager.query(
        `UPDATE action_confirmations SET status = 'pending', decided_at = NULL WHERE id = $1 AND status = 'executing' RETURNING ${COLUMNS}`,
        [id],
      );
      const reopened = rows[0] ?? null;
      if (reopened) {
        await this.events.record(manager, {
          type: CONFIRMATION_REQUESTED,
          payload: { user_id: reopened.user_id, confirmation: toConfirmationDto(reopened) },
        });
      }
      return reopened;
    });
  }

  /** Records, in the deciding transaction, that a confirmation left `pending`, so every session of the user drops it. */
  async recordDecision(manager: EntityManager, row: ConfirmationRow): Promise<void> {
    await this.events.record(manager, {
      type: CONFIRMATION_DECIDED,
      payload: { user_id: row.user_id, confirmation_id: row.id, status: row.status },
    });
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
