import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { inBatches } from '../../infra/database/in-batches';
import { SqlRepository } from '../../infra/database/sql-repository';
import { EVENTS_CHANNEL, EventsRepository } from '../events/events.repository';

/** A `capability_executions` row to write (`req_` id). */
export interface NewTrace {
  requestId: string;
  installId: string;
  userId: string;
  appId: string;
  packageId: string;
  capability: string;
  mode: string;
  trigger: string;
  outcome: string;
  errorCode: string | null;
  errorMessage: string | null;
  attempts: number;
  retriesExhausted: boolean;
  phases: Partial<Record<string, number>>;
  durationMs: number;
  /** Wait for the commit to reach disk (`synchronous_commit`): action traces only. */
  durable: boolean;
}

/** The outbox event a trace brings (`capability.invoked` / `capability.failed`), written with it. */
export interface TraceEvent {
  id: string;
  type: string;
  payload: Record<string, unknown>;
}

/**
 * Many non-durable traces and their events in one statement (`insertMany`):
 * the rows arrive as arrays, one per column, so the statement text is the
 * same whatever their number and is prepared once per connection. A trace
 * whose install is gone (uninstalled, erased since its call) is skipped with
 * its event rather than failing the others on the foreign key. The events
 * wake the dispatchers on commit, and only when there are some. The commit
 * waits for the disk only when a trace in the batch is durable (see `insert`).
 */
const INSERT_MANY_SQL = `WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                         $9::text[], $10::text[], $11::text[], $12::int[], $13::boolean[], $14::jsonb[], $15::int[],
                         $16::text[], $17::text[], $18::jsonb[])
      AS t(id, install_id, user_id, app_id, package_id, capability, mode, trigger, outcome, error_code, error_message,
           attempts, retries_exhausted, phases, duration_ms, event_id, event_type, event_payload)),
  trace AS (
    INSERT INTO capability_executions (id, install_id, user_id, app_id, package_id, capability, mode, trigger, outcome,
                                       error_code, error_message, attempts, retries_exhausted, phases, duration_ms)
    SELECT id, install_id, user_id, app_id, package_id, capability, mode, trigger, outcome,
           error_code, error_message, attempts, retries_exhausted, phases, duration_ms
      FROM input WHERE EXISTS (SELECT 1 FROM installs WHERE installs.id = input.install_id)
    RETURNING id),
  traced_event AS (SELECT input.* FROM input JOIN trace USING (id) WHERE input.event_id IS NOT NULL),
  ${EventsRepository.heldInsertSql({
    name: 'recorded_event',
    source: 'traced_event',
    id: 'event_id',
    type: 'event_type',
    payload: 'event_payload',
    delayMs: '0',
  })}
  SELECT set_config('synchronous_commit', $19, true),
         CASE WHEN EXISTS (SELECT 1 FROM traced_event) THEN pg_notify('${EVENTS_CHANNEL}', '0') END`;

/** A statement part written by another area in the same statement (the outbox event of `DomainEvents.inStatement`). */
export interface StatementPart {
  cte: string;
  select: string;
  params: unknown[];
}

/** The only reader and writer of `capability_executions`. */
@Injectable()
export class ExecutionTracesRepository extends SqlRepository {
  /** The prepared statement name of each text `insert` writes (with or without another table's part): one per text. */
  private readonly statementNames = new Map<string, string>();

  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /**
   * One statement: the trace row and, when given, the part another table adds (its outbox event), whose
   * parameters are numbered from `first`. Only durable traces wait for the commit to reach disk; the others
   * commit asynchronously (`synchronous_commit` off for this transaction alone): they are visible to everyone at
   * once and stay atomic, but a PostgreSQL crash may lose the last fraction of a second of them.
   */
  async insert(trace: NewTrace, also?: (first: number) => StatementPart): Promise<void> {
    const params: unknown[] = [
      trace.requestId,
      trace.installId,
      trace.userId,
      trace.appId,
      trace.packageId,
      trace.capability,
      trace.mode,
      trace.trigger,
      trace.outcome,
      trace.errorCode,
      trace.errorMessage,
      trace.attempts,
      trace.retriesExhausted,
      JSON.stringify(trace.phases),
      trace.durationMs,
      trace.durable ? 'on' : 'off',
    ];
    const ctes = [
      `trace AS (INSERT INTO capability_executions (id, install_id, user_id, app_id, package_id, capability, mode, trigger, outcome,
                                                    error_code, error_message, attempts, retries_exhausted, phases, duration_ms)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15))`,
    ];
    const selects = [`set_config('synchronous_commit', $16, true)`];
    if (also) {
      const part = also(params.length + 1);
      ctes.push(part.cte);
      selects.push(part.select);
      params.push(...part.params);
    }
    // Prepared: one is written per action, confirmation or failure, and is then planned once per connection.
    const sql = `WITH ${ctes.join(', ')} SELECT ${selects.join(', ')}`;
    let name = this.statementNames.get(sql);
    if (!name) this.statementNames.set(sql, (name = `trace_insert_${this.statementNames.size}`));
    await this.prepared(name, sql, params);
  }

  /**
   * Traces, each with its event when it brings one, in one statement: the
   * reads' traces (`ExecutionTraces.recordAfterAnswer`), which commit
   * asynchronously; a durable one among them makes the whole batch wait for
   * the disk, as `insert` does for it alone.
   */
  async insertMany(rows: Array<{ trace: NewTrace; event?: TraceEvent }>): Promise<void> {
    const column = <T>(pick: (row: { trace: NewTrace; event?: TraceEvent }) => T): T[] => rows.map(pick);
    await this.prepared('trace_insert_many', INSERT_MANY_SQL, [
      column((r) => r.trace.requestId),
      column((r) => r.trace.installId),
      column((r) => r.trace.userId),
      column((r) => r.trace.appId),
      column((r) => r.trace.packageId),
      column((r) => r.trace.capability),
      column((r) => r.trace.mode),
      column((r) => r.trace.trigger),
      column((r) => r.trace.outcome),
      column((r) => r.trace.errorCode),
      column((r) => r.trace.errorMessage),
      column((r) => r.trace.attempts),
      column((r) => r.trace.retriesExhausted),
      column((r) => JSON.stringify(r.trace.phases)),
      column((r) => r.trace.durationMs),
      column((r) => r.event?.id ?? null),
      column((r) => r.event?.type ?? null),
      column((r) => (r.event ? JSON.stringify(r.event.payload) : null)),
      rows.some((r) => r.trace.durable) ? 'on' : 'off',
    ]);
  }

  /** Drops traces older than `days` in small batches; how many. */
  purgeOlderThan(days: number): Promise<number> {
    return inBatches(
      this.dataSource,
      `DELETE FROM capability_executions WHERE id IN (
         SELECT id FROM capability_executions WHERE created_at < now() - make_interval(days => $2) LIMIT $1)`,
      [days],
    );
  }
}
