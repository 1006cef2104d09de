import { getQueueToken } from '@nestjs/bullmq';
import { Injectable, Logger } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { JobsOptions, Queue } from 'bullmq';
import { DataSource, EntityManager } from 'typeorm';
import { newId } from '../../common/ids';
import { QueueName } from './queues';

/** Background work recorded with the change that needs it. */
export interface OutboxJob {
  queue: QueueName;
  name: string;
  data: Record<string, unknown>;
  /**
   * Becomes the BullMQ job id. Give the id of the row the job works on (a
   * delivery, an export): BullMQ ignores a second add of an id it still
   * holds, so the same work is never queued twice. Defaults to a new id.
   */
  id?: string;
  /** BullMQ options (attempts, backoff, delay, priority…); the job id is always the row id. */
  opts?: Omit<JobsOptions, 'jobId' | 'repeat' | 'parent'>;
}

/** How long a request waits for Redis to take a job it relays itself. */
const RELAY_NOW_TIMEOUT_MS = 1_500;

interface OutboxRow {
  id: string;
  queue: QueueName;
  name: string;
  data: Record<string, unknown>;
  opts: JobsOptions;
}

/**
 * The transactional job outbox (docs/decisions.md, "Event backbone"). A job
 * is recorded in the transaction of the change that needs it, so it exists if
 * and only if the change committed; a statement trigger NOTIFYs the relays on
 * commit. The relay (JobRelay, worker role) moves committed rows to BullMQ in
 * one `addBulk` per queue, job id = row id, and marks them relayed; the row is
 * deleted when its job has completed, and kept (marked failed, run again
 * later) when it failed for good. Every job must be idempotent: a crash
 * between the add and the mark adds it again, which BullMQ ignores while it
 * holds the id and which does no work twice when it no longer does.
 */
@Injectable()
export class JobOutbox {
  private readonly logger = new Logger(JobOutbox.name);
  private readonly queues = new Map<string, Queue>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** Records jobs in the caller's transaction, in one statement; returns their ids. */
  async record(manager: EntityManager, jobs: OutboxJob | OutboxJob[]): Promise<string[]> {
    const list = Array.isArray(jobs) ? jobs : [jobs];
    if (list.length === 0) return [];
    if (!manager.queryRunner?.isTransactionActive) throw new Error('JobOutbox.record must be called inside a transaction');
    const ids = list.map((job) => job.id ?? newId('job'));
    await manager.query(
      `INSERT INTO job_outbox (id, queue, name, data, opts)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[], $5::jsonb[])
       ON CONFLICT (id) DO NOTHING`,
      [
        ids,
        list.map((job) => job.queue),
        list.map((job) => job.name),
        list.map((job) => JSON.stringify(job.data)),
        list.map((job) => JSON.stringify(job.opts ?? {})),
      ],
    );
    return ids;
  }

  /**
   * Relays the given committed rows now, from the process that wrote them,
   * instead of waiting for a relay to wake: for a request that waits on its
   * job (an agent action, an export). Takes no row lock and waits for Redis
   * at most RELAY_NOW_TIMEOUT_MS, so a request never hangs on an outage;
   * beside the relay it is harmless (BullMQ ignores a second add of an id).
   * Never throws: a row left unrelayed is the relay's.
   */
  async relayNow(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      const rows: OutboxRow[] = await this.dataSource.query(
        `SELECT id, queue, name, data, opts FROM job_outbox WHERE id = ANY($1) AND relayed_at IS NULL`,
        [ids],
      );
      if (rows.length === 0) return;
      const adding = this.add(rows);
      adding.catch(() => undefined);
      await Promise.race([
        adding,
        new Promise(
          (_, reject) => (timer = setTimeout(() => reject(new Error('Redis did not take the job in time')), RELAY_NOW_TIMEOUT_MS)),
        ),
      ]);
      await this.dataSource.query(
        `UPDATE job_outbox SET relayed_at = now(), checked_at = now() WHERE id = ANY($1) AND relayed_at IS NULL`,
        [rows.map((r) => r.id)],
      );
    } catch (error) {
      this.logger.warn({ err: error, ids }, 'immediate relay failed; the relay will move these jobs');
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Moves up to `limit` committed, unrelayed rows (only `ids` when given) to
   * BullMQ and marks them relayed, in one transaction: rows are locked with
   * SKIP LOCKED, so relays running at once take disjoint rows. If Redis
   * refuses, the transaction rolls back and the rows wait for the next wake.
   */
  async relay(limit: number, ids?: string[]): Promise<OutboxRow[]> {
    return this.dataSource.transaction(async (manager) => {
      const rows: OutboxRow[] = await manager.query(
        `SELECT id, queue, name, data, opts FROM job_outbox
          WHERE relayed_at IS NULL ${ids ? 'AND id = ANY($2)' : ''}
          ORDER BY created_at
          LIMIT $1
          FOR UPDATE SKIP LOCKED`,
        ids ? [limit, ids] : [limit],
      );
      if (rows.length === 0) return rows;
      await this.add(rows);
      await manager.query(`UPDATE job_outbox SET relayed_at = now(), checked_at = now() WHERE id = ANY($1)`, [rows.map((r) => r.id)]);
      return rows;
    });
  }

  /** Adds rows to their queues, one `addBulk` per queue. */
  async add(rows: OutboxRow[]): Promise<void> {
    const byQueue = new Map<string, OutboxRow[]>();
    for (const row of rows) byQueue.set(row.queue, [...(byQueue.get(row.queue) ?? []), row]);
    await Promise.all(
      [...byQueue].map(([name, list]) =>
        this.queue(name).addBulk(list.map((row) => ({ name: row.name, data: row.data, opts: { ...row.opts, jobId: row.id } }))),
      ),
    );
  }

  queue(name: string): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = this.moduleRef.get<Queue>(getQueueToken(name), { strict: false });
      this.queues.set(name, queue);
    }
    return queue;
  }
}

/**
 * The SQL that records one job per row of `source` (a CTE or table name of
 * the caller's statement), for set-based producers that write their rows and
 * their jobs in one statement (webhook fan-out). `idColumn` becomes the job
 * id; `dataSql` builds the job data from the row. Parameters start at `$<first>`.
 */
export function outboxInsertFrom(
  job: { queue: QueueName; name: string; opts?: OutboxJob['opts'] },
  source: { from: string; idColumn: string; dataSql: string; where?: string },
  first: number,
): { sql: string; params: unknown[] } {
  return {
    sql: `INSERT INTO job_outbox (id, queue, name, data, opts)
          SELECT ${source.idColumn}, $${first}, $${first + 1}, ${source.dataSql}, $${first + 2}::jsonb
            FROM ${source.from} ${source.where ? `WHERE ${source.where}` : ''}
          ON CONFLICT (id) DO NOTHING`,
    params: [job.queue, job.name, JSON.stringify(job.opts ?? {})],
  };
}
