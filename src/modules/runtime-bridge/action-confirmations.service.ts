import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { canonicalJson } from '../../common/json';
import type { Tx } from '../../infra/database/sql-repository';
import { ApiError } from '../../common/errors/api-error';
import { ProblemError } from '../../common/errors/problem-error';
import { isId, newId } from '../../common/ids';
import { DomainEvents } from '../events/domain-events';
import type { ExecutionTarget } from '../marketplace/installs.service';
import { CapabilityDescriptor } from '@soul-service/rules';
import { ActionConfirmationsRepository, ConfirmationOutcome, ConfirmationRow } from './action-confirmations.repository';

export type { ConfirmationRow } from './action-confirmations.repository';

/** How long a user has to confirm an action before it lapses. */
export const CONFIRMATION_LIFETIME_MINUTES = 15;
/** Outbox event of a new pending confirmation; the worker tells the user's sessions (`action.pending`). */
export const CONFIRMATION_REQUESTED = 'action.confirmation_requested';
/** Outbox event of a decision (confirm claimed it, or cancel); the worker tells the user's sessions (`action.decided`). */
export const CONFIRMATION_DECIDED = 'action.confirmation_decided';
/** Most pending confirmations listed at once (they lapse after CONFIRMATION_LIFETIME_MINUTES). */
export const PENDING_LIST_LIMIT = 100;

/** The hash that ties an idempotency key to its input: SHA-256 of the input's RFC 8785 canonical JSON. */
function inputHash(input: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(input)).digest('hex');
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
    private readonly confirmations: ActionConfirmationsRepository,
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
    const rows = await this.confirmations.pendingForUser(userId, PENDING_LIST_LIMIT);
    return { confirmations: rows.map(toConfirmationDto) };
  }

  private async insert(
    manager: Tx,
    requestId: string,
    target: ExecutionTarget,
    capability: CapabilityDescriptor,
    input: Record<string, unknown>,
    key: string | undefined,
    startedBy: 'user' | 'app',
  ): Promise<ConfirmationRow | null> {
    return this.confirmations.insert(manager, {
      id: newId('conf'),
      installId: target.install_id,
      userId: target.user_id,
      appId: target.app_id,
      packageId: target.package_id,
      capability: capability.name,
      input,
      inputHash: inputHash(input),
      idempotencyKey: key ?? newId('idem'),
      requestId,
      lifetimeMinutes: CONFIRMATION_LIFETIME_MINUTES,
      startedBy,
    });
  }

  /** The confirmation an earlier request with this idempotency key created; other input under the same key is a conflict. */
  private async existing(
    target: ExecutionTarget,
    capability: CapabilityDescriptor,
    input: Record<string, unknown>,
    idempotencyKey: string,
  ) {
    const existing = (await this.confirmations.findByKey(target.install_id, idempotencyKey))!;
    if (existing.capability !== capability.name || existing.input_hash !== inputHash(input)) {
      throw new ProblemError('conflict', `Idempotency key ${idempotencyKey} was already used with different parameters`, {
        runtime_error: { code: 'CONFLICT' },
      });
    }
    return toConfirmationDto(existing);
  }

  /** The user's confirmation, locked for the decision. Someone else's is not found. */
  async lockOwned(manager: Tx, userId: string, confirmationId: string): Promise<ConfirmationRow> {
    const row = isId(confirmationId, 'conf') ? await this.confirmations.lockForUser(manager, confirmationId, userId) : null;
    if (!row) throw new ApiError('NOT_FOUND', `No confirmation ${confirmationId}`);
    if (row.status === 'pending' && row.expires_at.getTime() < Date.now()) {
      await this.confirmations.markExpired(manager, row.id);
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
      const reopened = await this.confirmations.reopen(manager, id);
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
  async recordDecision(manager: Tx, row: ConfirmationRow): Promise<void> {
    await this.events.record(manager, {
      type: CONFIRMATION_DECIDED,
      payload: { user_id: row.user_id, confirmation_id: row.id, status: row.status },
    });
  }

  /** In the caller's transaction when given, else on its own. */
  async setStatus(
    id: string,
    status: ConfirmationRow['status'],
    outcome: ConfirmationOutcome = {},
    manager?: Tx,
  ): Promise<ConfirmationRow> {
    return this.confirmations.setStatus(id, status, outcome, manager);
  }
}
