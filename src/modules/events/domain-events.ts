import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { newId } from '../../common/ids';

/** PostgreSQL channel that wakes the dispatcher when a transaction with events commits. */
export const EVENTS_CHANNEL = 'domain_events';

export interface DomainEventInput {
  type: string;
  payload: Record<string, unknown>;
  /** Hold the event back from the subscribers this long after commit (a durable copy of work a fast path does first). */
  delayMs?: number;
}

export interface DomainEvent extends DomainEventInput {
  id: string;
  createdAt: Date;
}

/**
 * Records domain events in the outbox. Always pass the EntityManager of the
 * transaction that makes the change: the event then exists if and only if the
 * change committed. `pg_notify` inside the same transaction is delivered by
 * PostgreSQL on commit and dropped on rollback, which is exactly the wake-up
 * the dispatcher needs.
 */
@Injectable()
export class DomainEvents {
  async record(manager: EntityManager, event: DomainEventInput): Promise<DomainEvent> {
    if (!manager.queryRunner?.isTransactionActive) {
      throw new Error('DomainEvents.record must be called inside a transaction');
    }
    const id = newId('evt');
    // One round trip: the row and the wake-up (delivered on commit, dropped on rollback). The payload is the hold
    // in milliseconds ("0" for none): a held-back event sets the dispatcher's timer instead of waking it for nothing.
    const delayMs = Math.max(0, Math.round(event.delayMs ?? 0));
    const rows: Array<{ created_at: Date }> = await manager.query(
      `WITH recorded AS (
         INSERT INTO events (id, type, payload, available_at)
         VALUES ($1, $2, $3, now() + make_interval(secs => $4::double precision / 1000)) RETURNING created_at)
       SELECT created_at, pg_notify($5, $4::text) FROM recorded`,
      [id, event.type, JSON.stringify(event.payload), delayMs, EVENTS_CHANNEL],
    );
    return { id, type: event.type, payload: event.payload, createdAt: rows[0].created_at };
  }

  /**
   * Several events in one statement, for a change that produces many at once
   * (a bulk import, a batch job): the same guarantee as `record`, one round
   * trip for all of them. Returns them in the order given.
   */
  async recordMany(manager: EntityManager, inputs: DomainEventInput[]): Promise<DomainEvent[]> {
    if (inputs.length === 0) return [];
    if (!manager.queryRunner?.isTransactionActive) {
      throw new Error('DomainEvents.recordMany must be called inside a transaction');
    }
    const ids = inputs.map(() => newId('evt'));
    const rows: Array<{ id: string; created_at: Date }> = await manager.query(
      `WITH recorded AS (
         INSERT INTO events (id, type, payload, available_at)
         SELECT id, type, payload, now() + make_interval(secs => delay_ms::double precision / 1000)
           FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::int[]) AS e(id, type, payload, delay_ms)
         RETURNING id, created_at)
       SELECT id, created_at, pg_notify($5, '0') FROM recorded`,
      [
        ids,
        inputs.map((e) => e.type),
        inputs.map((e) => JSON.stringify(e.payload)),
        inputs.map((e) => Math.max(0, Math.round(e.delayMs ?? 0))),
        EVENTS_CHANNEL,
      ],
    );
    const createdAt = new Map(rows.map((row) => [row.id, row.created_at]));
    return inputs.map((input, i) => ({ id: ids[i], type: input.type, payload: input.payload, createdAt: createdAt.get(ids[i])! }));
  }

  /**
   * The event as parts of a single statement, for a change that is itself one
   * statement: `WITH change AS (…), <cte> SELECT <select>`. A statement is its
   * own transaction, so the event exists exactly when the change does, as with
   * `record`, in one round trip instead of four. Parameters start at `$<first>`.
   */
  inStatement(event: DomainEventInput, first: number): { cte: string; select: string; params: unknown[] } {
    return {
      cte: `recorded_event AS (INSERT INTO events (id, type, payload) VALUES ($${first}, $${first + 1}, $${first + 2}))`,
      select: `pg_notify('${EVENTS_CHANNEL}', '0')`,
      params: [newId('evt'), event.type, JSON.stringify(event.payload)],
    };
  }
}
