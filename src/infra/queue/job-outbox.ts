import { getQueueToken } from '@nestjs/bullmq';
import { Injectable, Logger } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { JobsOptions, Queue } from 'bullmq';
import { DataSource, EntityManager } from 'typeorm';
import { newId } from '../../common/ids';
import { afterCommit } from '../database/after-transaction';
import { JobOutboxRepository, OutboxRow } from './job-outbox.repository';
import { QueueName } from './queues';

export { outboxInsertFrom } from './job-outbox.repository';

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

/**
 * The transactional job outbox (docs/decisions.md, "Event backbone"). A job
 * is recorded in the transaction of the change that needs it, so it exists if
 * and only if the change committed; a row trigger NOTIFYs the relays on
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
    private readonly outbox: JobOutboxRepository,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** Records jobs in the caller's transaction, in one statement; returns their ids. */
  async record(manager: EntityManager, jobs: OutboxJob | OutboxJob[]): Promise<string[]> {
    const list = Array.isArray(jobs) ? jobs : [jobs];
    if (list.length === 0) return [];
    if (!manager.queryRunner?.isTransactionActive) throw new Error('JobOutbox.record must be called inside a transaction');
    const ids = list.map((job) => job.id ?? newId('job'));
    await this.outbox.insertMany(
      manager,
      list.map((job, i) => ({ id: ids[i], queue: job.queue, name: job.name, data: job.data, opts: job.opts ?? {} })),
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
      const rows = await this.outbox.findUnrelayed(ids);
      if (rows.length === 0) return;
      const adding = this.add(rows);
      adding.catch(() => undefined);
      await Promise.race([
        adding,
        new Promise(
          (_, reject) => (timer = setTimeout(() => reject(new Error('Redis did not take the job in time')), RELAY_NOW_TIMEOUT_MS)),
        ),
      ]);
      await this.outbox.markRelayedUnlessRelayed(rows.map((r) => r.id));
    } catch (error) {
      this.logger.warn({ err: error, ids }, 'immediate relay failed; the relay will move these jobs');
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Adds rows written in `manager`'s transaction with `writerRelays` (see
   * `outboxInsertFrom`: already marked relayed, waking no relay) to BullMQ
   * once that transaction commits: a lone event's drain job reaches its
   * queue without a relay's wake-up and transaction in between. Never
   * throws. If Redis refuses, the rows are handed back to the relays
   * (unmarked); if this process dies between the commit and the add, the
   * relay's sweep finds the jobs missing from BullMQ once they have gone
   * unchecked for JOB_RELAY_CHECK_AFTER_MS and adds them, as it does after a
   * Redis restart. A row written in a savepoint that was rolled back is added
   * all the same; its job finds nothing to do (every job reads its work from
   * the database).
   */
  relayAfterCommit(manager: EntityManager, rows: OutboxRow[]): void {
    if (rows.length === 0) return;
    afterCommit(manager, () => void this.addOrHandBack(rows));
  }

  private async addOrHandBack(rows: OutboxRow[]): Promise<void> {
    try {
      await this.add(rows);
    } catch (error) {
      this.logger.warn({ err: error, jobs: rows.length }, 'could not add jobs after their commit; handing them to the relays');
      await this.outbox.unmarkRelayed(rows.map((row) => row.id)).catch((unmarkError: unknown) => {
        this.logger.warn({ err: unmarkError, jobs: rows.length }, "could not hand jobs to the relays; the relay's sweep will add them");
      });
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
      const rows = await this.outbox.claimUnrelayed(manager, limit, ids);
      if (rows.length === 0) return rows;
      await this.add(rows);
      const relayed = rows.map((r) => r.id);
      await this.outbox.markRelayed(manager, relayed);
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
