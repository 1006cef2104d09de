import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { inBatches } from '../../infra/database/in-batches';
import { SqlRepository } from '../../infra/database/sql-repository';

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
    // Prepared: one is written per capability call, and parsing and planning it cost as much as running it.
    const sql = `WITH ${ctes.join(', ')} SELECT ${selects.join(', ')}`;
    let name = this.statementNames.get(sql);
    if (!name) this.statementNames.set(sql, (name = `trace_insert_${this.statementNames.size}`));
    await this.prepared(name, sql, params);
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
