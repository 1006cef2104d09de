import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { newId } from '../../common/ids';
import { DomainEvent, DomainEventInput } from './domain-event';
import { EventsRepository } from './events.repository';

export type { DomainEvent, DomainEventInput } from './domain-event';

/**
 * Records domain events in the outbox. Always pass the EntityManager of the
 * transaction that makes the change: the event then exists if and only if the
 * change committed. `pg_notify` inside the same transaction is delivered by
 * PostgreSQL on commit and dropped on rollback, which is exactly the wake-up
 * the dispatcher needs.
 */
/** Wake-ups for held events this process sends at most once per this many milliseconds. */
const HELD_WAKE_EVERY_MS = 250;

@Injectable()
export class DomainEvents {
  private lastHeldWake = 0;

  constructor(private readonly events: EventsRepository) {}

  /**
   * After committing events held back `delayMs` without a wake-up in their
   * statement (`EventsRepository.heldInsertSql`), tells the dispatchers, at
   * most once per HELD_WAKE_EVERY_MS per process: a NOTIFY per message costs
   * every listening backend and process a wake-up. Skipping is safe while the
   * hold is longer than the window: the dispatcher woken by the last notice
   * drains when that event falls due, after this one committed, and then
   * chains to the next due event (`nextDueInMs`), this one included. A lost
   * notice is covered by the sweep (`EVENT_SWEEP_INTERVAL_MS`).
   */
  async wakeAfterHold(delayMs: number): Promise<void> {
    const now = Date.now();
    if (delayMs >= 2 * HELD_WAKE_EVERY_MS && now - this.lastHeldWake < HELD_WAKE_EVERY_MS) return;
    this.lastHeldWake = now;
    await this.events.notifyHeld(Math.max(0, Math.round(delayMs)));
  }

  async record(manager: EntityManager, event: DomainEventInput): Promise<DomainEvent> {
    if (!manager.queryRunner?.isTransactionActive) {
      throw new Error('DomainEvents.record must be called inside a transaction');
    }
    const id = newId('evt');
    const delayMs = holdOf(event);
    const createdAt = await this.events.insert(manager, { id, type: event.type, payload: event.payload, delayMs });
    return { id, type: event.type, payload: event.payload, createdAt };
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
    const createdAt = await this.events.insertMany(
      manager,
      inputs.map((input, i) => ({ id: ids[i], type: input.type, payload: input.payload, delayMs: holdOf(input) })),
    );
    return inputs.map((input, i) => ({ id: ids[i], type: input.type, payload: input.payload, createdAt: createdAt.get(ids[i])! }));
  }

  /**
   * The event as parts of a single statement, for a change that is itself one
   * statement: `WITH change AS (…), <cte> SELECT <select>`. A statement is its
   * own transaction, so the event exists exactly when the change does, as with
   * `record`, in one round trip instead of four. Parameters start at `$<first>`;
   * the event's id is made here unless the caller made it.
   */
  inStatement(event: DomainEventInput & { id?: string }, first: number): { cte: string; select: string; params: unknown[] } {
    return this.events.insertInStatement({ id: event.id ?? newId('evt'), type: event.type, payload: event.payload }, first);
  }

  /** Drops events dispatched more than `days` ago (retention job); answers how many. */
  purgeDispatched(days: number): Promise<number> {
    return this.events.purgeDispatched(days);
  }
}

/** The hold of an event in whole milliseconds, never negative. */
function holdOf(event: DomainEventInput): number {
  return Math.max(0, Math.round(event.delayMs ?? 0));
}
