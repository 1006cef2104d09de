import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { eachBatch } from '../../infra/database/in-batches';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';

/** PostgreSQL channel that wakes the dispatcher when a transaction with events commits. */
export const EVENTS_CHANNEL = 'domain_events';

/**
 * The dispatcher's claim: up to $1 undispatched events that are due, in due
 * order (`available_at`, then `created_at` and `id`; an event without a hold is
 * due when it is created), marked dispatched. The pending index holds exactly
 * that order, so a claim reads only the rows it takes. Ordered by `created_at`
 * first, as it was, the index could not serve the order and every claim read
 * and sorted the whole backlog, so a claim cost as much as the backlog was
 * long. Exported for the medium test that checks the plan.
 */
export const CLAIM_DUE_SQL = `UPDATE events SET dispatched_at = now(), attempts = attempts + 1, last_error = NULL
  WHERE id IN (SELECT id FROM events
                WHERE dispatched_at IS NULL AND available_at <= now()
                ORDER BY available_at, created_at, id
                LIMIT $1
                FOR UPDATE SKIP LOCKED)
  RETURNING id, type, payload, created_at, attempts`;

/** An event to write: its id is made by the caller, its hold is in milliseconds (0 for none). */
export interface NewEventRow {
  id: string;
  type: string;
  payload: Record<string, unknown>;
  delayMs: number;
}

/** An event claimed for dispatch, with the attempts made before this one. */
export interface ClaimedEvent {
  id: string;
  type: string;
  payload: Record<string, unknown>;
  createdAt: Date;
  attempts: number;
}

interface ClaimedRow {
  id: string;
  type: string;
  payload: Record<string, unknown>;
  created_at: Date;
  attempts: number;
}

/**
 * The `events` table: the transactional outbox of domain events. Written in
 * the caller's transaction (DomainEvents), claimed and marked by the worker's
 * dispatcher in its own, purged by the retention job. The hot paths (record,
 * claim, mark) are one statement each.
 */
@Injectable()
export class EventsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** Writes one event and its wake-up; answers when it was created. */
  async insert(tx: Tx, event: NewEventRow): Promise<Date> {
    // One round trip: the row and the wake-up (delivered on commit, dropped on rollback). The payload is the hold
    // in milliseconds ("0" for none): a held-back event sets the dispatcher's timer instead of waking it for nothing.
    const rows = await this.prepared<{ created_at: Date }>(
      'events_insert',
      `WITH recorded AS (
         INSERT INTO events (id, type, payload, available_at)
         VALUES ($1, $2, $3, now() + make_interval(secs => $4::double precision / 1000)) RETURNING created_at)
       SELECT created_at, pg_notify($5, $4::text) FROM recorded`,
      [event.id, event.type, JSON.stringify(event.payload), event.delayMs, EVENTS_CHANNEL],
      tx,
    );
    return rows[0].created_at;
  }

  /** Writes several events and one wake-up in one statement; answers when each was created, by id. */
  async insertMany(tx: Tx, events: NewEventRow[]): Promise<Map<string, Date>> {
    const rows = await this.rows<{ id: string; created_at: Date }>(
      `WITH recorded AS (
         INSERT INTO events (id, type, payload, available_at)
         SELECT id, type, payload, now() + make_interval(secs => delay_ms::double precision / 1000)
           FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::int[]) AS e(id, type, payload, delay_ms)
         RETURNING id, created_at)
       SELECT id, created_at, pg_notify($5, '0') FROM recorded`,
      [
        events.map((e) => e.id),
        events.map((e) => e.type),
        events.map((e) => JSON.stringify(e.payload)),
        events.map((e) => e.delayMs),
        EVENTS_CHANNEL,
      ],
      tx,
    );
    return new Map(rows.map((row) => [row.id, row.created_at]));
  }

  /**
   * The insert of one event as parts of the caller's single statement
   * (`WITH change AS (…), <cte> SELECT <select>`), for a change that is itself
   * one statement. Parameters start at `$<first>`.
   */
  insertInStatement(
    event: { id: string; type: string; payload: Record<string, unknown> },
    first: number,
  ): { cte: string; select: string; params: unknown[] } {
    return {
      cte: `recorded_event AS (INSERT INTO events (id, type, payload) VALUES ($${first}, $${first + 1}, $${first + 2}))`,
      select: `pg_notify('${EVENTS_CHANNEL}', '0')`,
      params: [event.id, event.type, JSON.stringify(event.payload)],
    };
  }

  /**
   * The insert of one event per row of `source` (a CTE of the caller's single
   * statement), its payload an SQL expression over that row, held back
   * `delayMs` (an SQL number expression). No wake-up rides with it: the
   * caller wakes the dispatchers after the commit (`DomainEvents.wakeAfterHold`).
   * For a hot path that writes its change and its event in one prepared
   * statement (the message send).
   */
  static heldInsertSql(args: { name: string; source: string; id: string; type: string; payload: string; delayMs: string }): string {
    return `${args.name} AS (
         INSERT INTO events (id, type, payload, available_at)
         SELECT ${args.id}, ${args.type}, ${args.payload}, now() + make_interval(secs => ${args.delayMs}::double precision / 1000)
           FROM ${args.source})`;
  }

  /** Tells the dispatchers that events held back `delayMs` have committed (the payload is the hold, as with `insert`). */
  async notifyHeld(delayMs: number): Promise<void> {
    await this.execute(`SELECT pg_notify($1, $2)`, [EVENTS_CHANNEL, String(delayMs)]);
  }

  /**
   * Claims up to `size` due, undispatched events, earliest due first, skipping those
   * another drain holds, and marks them dispatched, in one statement: the
   * caller's transaction commits the mark together with the subscribers'
   * work, or rolls both back. `attempts` comes back counting this one.
   * Handed back in claim order (RETURNING keeps none).
   */
  async claimDue(tx: Tx, size: number): Promise<ClaimedEvent[]> {
    const rows = await this.prepared<ClaimedRow>('events_claim_due', CLAIM_DUE_SQL, [size], tx);
    return inClaimOrder(rows);
  }

  /** The same claim for one event (dispatching a failed batch's events one by one); none when another drain took it. */
  async claimOne(tx: Tx, id: string): Promise<ClaimedEvent | null> {
    const { rows } = await this.changed<ClaimedRow>(
      `UPDATE events SET dispatched_at = now(), attempts = attempts + 1, last_error = NULL
        WHERE id IN (SELECT id FROM events WHERE id = $1 AND dispatched_at IS NULL FOR UPDATE SKIP LOCKED)
        RETURNING id, type, payload, created_at, attempts`,
      [id],
      tx,
    );
    return inClaimOrder(rows)[0] ?? null;
  }

  /**
   * How long until the next event that is not due yet becomes due, read in
   * the claim's transaction: `now()` is the claim's instant, so an event that
   * falls due while this batch runs is counted, never missed.
   */
  async nextDueInMs(tx: Tx): Promise<number | null> {
    const row = await this.first<{ ms: number | null }>(
      `SELECT (extract(epoch FROM min(available_at) - clock_timestamp()) * 1000)::float8 AS ms
         FROM events WHERE dispatched_at IS NULL AND available_at > now()`,
      [],
      tx,
    );
    return row?.ms ?? null;
  }

  /**
   * Counts a failed attempt and holds the event back for `delayMs`, after the
   * transaction that tried it rolled back (its claim with it). An event
   * another drain dispatched meanwhile is left alone.
   */
  async postpone(id: string, error: string, delayMs: number): Promise<void> {
    await this.execute(
      `UPDATE events SET attempts = attempts + 1, last_error = $2, available_at = now() + make_interval(secs => $3::double precision / 1000)
        WHERE id = $1 AND dispatched_at IS NULL`,
      [id, error, delayMs],
    );
  }

  /** Deletes events dispatched more than `days` ago, in small batches; answers how many. */
  purgeDispatched(days: number): Promise<number> {
    return eachBatch(async (limit) => {
      const { count } = await this.changed(
        `DELETE FROM events WHERE id IN (
           SELECT id FROM events WHERE dispatched_at IS NOT NULL AND dispatched_at < now() - make_interval(days => $2) LIMIT $1)`,
        [limit, days],
      );
      return count;
    });
  }
}

function inClaimOrder(rows: ClaimedRow[]): ClaimedEvent[] {
  return rows
    .map((row) => ({ id: row.id, type: row.type, payload: row.payload, createdAt: row.created_at, attempts: row.attempts }))
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
