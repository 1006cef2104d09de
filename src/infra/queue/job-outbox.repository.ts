import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { JobsOptions } from 'bullmq';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../database/sql-repository';
import { QueueName } from './queues';

/** A job as the outbox holds it: what the relay hands to BullMQ (job id = row id). */
export interface OutboxRow {
  id: string;
  queue: QueueName;
  name: string;
  data: Record<string, unknown>;
  opts: JobsOptions;
}

/** A job to write; `opts` as BullMQ takes them, without the job id (the row id is). */
export interface NewOutboxRow {
  id: string;
  queue: QueueName;
  name: string;
  data: Record<string, unknown>;
  opts: Omit<JobsOptions, 'jobId' | 'repeat' | 'parent'>;
}

/**
 * The SQL that records one job per row of `source` (a CTE or table name of
 * the caller's statement), for set-based producers that write their rows and
 * their jobs in one statement (webhook fan-out). `idColumn` becomes the job
 * id; `dataSql` builds the job data from the row. Parameters start at `$<first>`.
 * The one place outside this repository's methods that writes job_outbox, as
 * a part of another repository's statement: splitting that statement would
 * cost a round trip on the fan-out's hot path.
 *
 * With `writerRelays` the rows are written already marked relayed, wake no
 * relay, and come back from the statement (as `OutboxRow`s): the caller
 * hands them to `JobOutbox.relayAfterCommit`, which adds them to BullMQ.
 */
export function outboxInsertFrom(
  job: { queue: QueueName; name: string; opts?: NewOutboxRow['opts'] },
  source: { from: string; idColumn: string; dataSql: string; where?: string },
  first: number,
  options: { writerRelays?: boolean } = {},
): { sql: string; params: unknown[] } {
  const relayed = options.writerRelays === true ? 'now()' : 'NULL';
  return {
    sql: `INSERT INTO job_outbox (id, queue, name, data, opts, relayed_at, checked_at)
          SELECT ${source.idColumn}, $${first}, $${first + 1}, ${source.dataSql}, $${first + 2}::jsonb, ${relayed}, ${relayed}
            FROM ${source.from} ${source.where ? `WHERE ${source.where}` : ''}
          ON CONFLICT (id) DO NOTHING
          ${options.writerRelays === true ? 'RETURNING id, queue, name, data, opts' : ''}`,
    params: [job.queue, job.name, JSON.stringify(job.opts ?? {})],
  };
}

/**
 * The `job_outbox` table: background work recorded with the change that needs
 * it (JobOutbox), moved to BullMQ and settled by the relay (JobRelay). Every
 * method is one statement; the claims lock with SKIP LOCKED so relays and
 * sweeps running at once take disjoint rows.
 */
@Injectable()
export class JobOutboxRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** Writes jobs in the caller's transaction, in one statement; an id already there is left alone. */
  async insertMany(tx: Tx, jobs: NewOutboxRow[]): Promise<void> {
    await this.execute(
      `INSERT INTO job_outbox (id, queue, name, data, opts)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::jsonb[])
       ON CONFLICT (id) DO NOTHING`,
      [
        jobs.map((job) => job.id),
        jobs.map((job) => job.queue),
        jobs.map((job) => job.name),
        jobs.map((job) => JSON.stringify(job.data)),
        jobs.map((job) => JSON.stringify(job.opts)),
      ],
      tx,
    );
  }

  /** The given rows that no relay has moved yet, without locking them. */
  findUnrelayed(ids: string[]): Promise<OutboxRow[]> {
    return this.rows<OutboxRow>(`SELECT id, queue, name, data, opts FROM job_outbox WHERE id = ANY($1) AND relayed_at IS NULL`, [ids]);
  }

  /** Hands rows marked relayed by their writer back to the relays (the writer could not add them to BullMQ). */
  async unmarkRelayed(ids: string[]): Promise<void> {
    await this.execute(`UPDATE job_outbox SET relayed_at = NULL, checked_at = NULL WHERE id = ANY($1) AND failed_at IS NULL`, [ids]);
  }

  /** Marks rows relayed unless a relay did meanwhile. */
  async markRelayedUnlessRelayed(ids: string[]): Promise<void> {
    await this.execute(`UPDATE job_outbox SET relayed_at = now(), checked_at = now() WHERE id = ANY($1) AND relayed_at IS NULL`, [ids]);
  }

  /** Locks up to `limit` unrelayed rows (only `ids` when given), oldest first. */
  claimUnrelayed(tx: Tx, limit: number, ids?: string[]): Promise<OutboxRow[]> {
    return this.rows<OutboxRow>(
      `SELECT id, queue, name, data, opts FROM job_outbox
          WHERE relayed_at IS NULL ${ids ? 'AND id = ANY($2)' : ''}
          ORDER BY created_at
          LIMIT $1
          FOR UPDATE SKIP LOCKED`,
      ids ? [limit, ids] : [limit],
      tx,
    );
  }

  async markRelayed(tx: Tx, ids: string[]): Promise<void> {
    await this.execute(`UPDATE job_outbox SET relayed_at = now(), checked_at = now() WHERE id = ANY($1)`, [ids], tx);
  }

  /** Deletes the rows of jobs that completed (only rows that were relayed). */
  async deleteCompleted(ids: string[]): Promise<void> {
    await this.execute(`DELETE FROM job_outbox WHERE id = ANY($1) AND relayed_at IS NOT NULL`, [ids]);
  }

  /** Marks the rows of jobs that failed for good, each with its error (only rows that were relayed). */
  async markFailed(failures: Array<{ id: string; error: string }>): Promise<void> {
    await this.execute(
      `UPDATE job_outbox o SET failed_at = now(), failures = o.failures + 1, last_error = f.error, checked_at = now()
             FROM unnest($1::text[], $2::text[]) AS f(id, error)
            WHERE o.id = f.id AND o.relayed_at IS NOT NULL`,
      [failures.map((f) => f.id), failures.map((f) => f.error)],
    );
  }

  /** Locks up to `limit` relayed, unfailed rows not checked for `checkAfterMs`, least recently checked first. */
  claimUnchecked(tx: Tx, checkAfterMs: number, limit: number): Promise<OutboxRow[]> {
    return this.rows<OutboxRow>(
      `SELECT id, queue, name, data, opts FROM job_outbox
            WHERE relayed_at IS NOT NULL AND failed_at IS NULL
              AND checked_at < now() - make_interval(secs => $1::double precision / 1000)
            ORDER BY checked_at LIMIT $2
            FOR UPDATE SKIP LOCKED`,
      [checkAfterMs, limit],
      tx,
    );
  }

  async markChecked(tx: Tx, ids: string[]): Promise<void> {
    await this.execute(`UPDATE job_outbox SET checked_at = now() WHERE id = ANY($1)`, [ids], tx);
  }

  async deleteMany(tx: Tx, ids: string[]): Promise<void> {
    await this.execute(`DELETE FROM job_outbox WHERE id = ANY($1)`, [ids], tx);
  }

  /** Marks rows failed that the sweep found failed in BullMQ (their failure event was missed). */
  async markFailedBySweep(tx: Tx, ids: string[]): Promise<void> {
    await this.execute(
      `UPDATE job_outbox SET failed_at = now(), failures = failures + 1, last_error = 'failed (seen by the sweep)' WHERE id = ANY($1)`,
      [ids],
      tx,
    );
  }

  /**
   * Locks up to `limit` failed rows with fewer than `maxFailures` failures
   * whose cool-down (`retryAfterMs`, doubling per failure) has passed, oldest failure first.
   */
  claimFailedDue(tx: Tx, retryAfterMs: number, limit: number, maxFailures: number): Promise<OutboxRow[]> {
    return this.rows<OutboxRow>(
      `SELECT id, queue, name, data, opts FROM job_outbox
          WHERE failed_at IS NOT NULL AND failures < $3
            AND failed_at < now() - make_interval(secs => $1::double precision * power(2, failures - 1) / 1000)
          ORDER BY failed_at LIMIT $2
          FOR UPDATE SKIP LOCKED`,
      [retryAfterMs, limit, maxFailures],
      tx,
    );
  }

  /** Clears the failure mark of rows run again. */
  async markRetried(tx: Tx, ids: string[]): Promise<void> {
    await this.execute(`UPDATE job_outbox SET failed_at = NULL, checked_at = now() WHERE id = ANY($1)`, [ids], tx);
  }
}
