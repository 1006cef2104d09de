import { WorkerHost } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { Job, Worker } from 'bullmq';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { PgListener } from '../database/pg-listener';
import { BackboneMetrics } from '../metrics/backbone-metrics';
import { ConcurrentRuns } from './concurrent-runs';
import { JobOutbox } from './job-outbox';
import { JobOutboxRepository } from './job-outbox.repository';

/** PostgreSQL channel the job_outbox trigger notifies on commit (migration JobOutbox1764001400000). */
export const JOB_OUTBOX_CHANNEL = 'job_outbox';

/** Finished jobs are settled (their rows deleted or marked failed) in one statement at most this often. */
const SETTLE_EVERY_MS = 100;
const SWEEP_BATCH = 1_000;
/** A job that failed for good this many times is left for an operator (`job_outbox.failed_at`, `last_error`). */
const MAX_FAILURES = 6;
const LIVE_STATES = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/**
 * Worker role: moves committed job_outbox rows to BullMQ (several relays at
 * once, woken by NOTIFY on commit), deletes a row once its job has completed
 * (marks it failed when the job failed for good), and runs the one safety
 * sweep of the backbone: rows whose wake-up was missed are relayed, a relayed
 * row whose job BullMQ no longer holds (a Redis restart without persistence,
 * a job removed by hand) is added again, and a failed job is run again after
 * a cool-down (its attempts may all have met an outage). No area keeps a
 * sweeper of its own.
 */
@Injectable()
export class JobRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(JobRelay.name);
  private readonly listener: PgListener;
  private readonly relays: ConcurrentRuns;
  private sweepTimer: NodeJS.Timeout | null = null;
  private settleTimer: NodeJS.Timeout | null = null;
  private completed: string[] = [];
  private failed: Array<{ id: string; error: string }> = [];
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly outbox: JobOutbox,
    private readonly outboxRows: JobOutboxRepository,
    private readonly discovery: DiscoveryService,
    private readonly metrics: BackboneMetrics,
  ) {
    this.relays = new ConcurrentRuns(
      () => this.drain(),
      () => this.config.backbone.relays,
      (error) => this.logger.warn({ err: error }, 'job relay failed; retrying at the next wake or sweep'),
    );
    this.listener = new PgListener(config.databaseUrl, JOB_OUTBOX_CHANNEL, () => this.wake(), this.logger);
  }

  async onApplicationBootstrap(): Promise<void> {
    this.watchWorkers();
    await this.listener.start();
    this.sweepTimer = setInterval(() => void this.sweep(), this.config.backbone.relaySweepMs);
    this.sweepTimer.unref();
    this.settleTimer = setInterval(() => void this.settle(), SETTLE_EVERY_MS);
    this.settleTimer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.settleTimer) clearInterval(this.settleTimer);
    await this.relays.stop();
    await this.settle();
    await this.listener.stop();
  }

  /** Starts relays up to the configured number; a wake while all run makes them go round again. */
  wake(): void {
    this.relays.wake();
    // A full batch suggests more: let the other relays start on the next one at once.
    if (this.relays.hasRoom) setImmediate(() => this.wakeIfBusy());
  }

  private wakeIfBusy(): void {
    if (this.relays.active > 0 && this.relays.hasRoom) this.relays.wake();
  }

  private async drain(): Promise<void> {
    const limit = this.config.backbone.relayBatchSize;
    for (;;) {
      if (this.stopped) return;
      const rows = await this.outbox.relay(limit);
      for (const [queue, count] of countByQueue(rows)) this.metrics.jobsRelayed(queue, count);
      if (rows.length < limit) return;
    }
  }

  /**
   * A completed job no longer needs its row. A job that failed for good
   * (no BullMQ attempt left) keeps it, marked failed: its attempts may all
   * have met an outage (the database away for longer than its backoff), so
   * the sweep runs it again later; every job is idempotent, and one whose
   * work was settled meanwhile does nothing.
   */
  private watchWorkers(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const host = wrapper.instance as unknown;
      if (!(host instanceof WorkerHost)) continue;
      const worker = (host as WorkerHost<Worker>).worker;
      worker.on('completed', (job: Job) => {
        if (job.id) this.completed.push(job.id);
      });
      worker.on('failed', (job: Job | undefined, error: Error) => {
        if (job?.id && job.finishedOn) this.failed.push({ id: job.id, error: error.message.slice(0, 2000) });
      });
    }
  }

  private async settle(): Promise<void> {
    const completed = this.completed;
    const failed = this.failed;
    this.completed = [];
    this.failed = [];
    try {
      if (completed.length > 0) await this.outboxRows.deleteCompleted(completed);
      if (failed.length > 0) await this.outboxRows.markFailed(failed);
    } catch (error) {
      // The sweep finds these jobs finished in BullMQ and settles their rows later.
      this.logger.warn({ err: error, count: completed.length + failed.length }, 'could not settle finished jobs; the sweep will');
    }
  }

  /**
   * The safety sweep. First anything committed but not relayed (a missed
   * NOTIFY, Redis away at the time). Then relayed rows unchecked for a while:
   * a job BullMQ still holds is left alone, a completed one settles its row,
   * one it has lost is added again, and one that failed for good is marked
   * failed. Last, failed jobs whose cool-down has passed (it doubles with
   * each failure) are run again, up to MAX_FAILURES times.
   */
  async sweep(): Promise<{ relayed: number; recovered: number; settled: number; retried: number }> {
    const result = { relayed: 0, recovered: 0, settled: 0, retried: 0 };
    if (this.stopped) return result;
    try {
      result.relayed = (await this.outbox.relay(this.config.backbone.relayBatchSize)).length;
      await this.dataSource.transaction(async (manager) => {
        const rows = await this.outboxRows.claimUnchecked(manager, this.config.backbone.relayCheckAfterMs, SWEEP_BATCH);
        if (rows.length === 0) return;
        const states = await Promise.all(rows.map((row) => this.outbox.queue(row.queue).getJobState(row.id)));
        const pick = (wanted: (state: string) => boolean) => rows.filter((_row, i) => wanted(states[i]));
        const lost = pick((state) => state === 'unknown');
        const completed = pick((state) => state === 'completed');
        const failed = pick((state) => state === 'failed');
        const live = pick((state) => LIVE_STATES.has(state));
        if (lost.length > 0) await this.outbox.add(lost);
        await this.outboxRows.markChecked(manager, idsOf([...live, ...lost]));
        if (completed.length > 0) await this.outboxRows.deleteMany(manager, idsOf(completed));
        if (failed.length > 0) await this.outboxRows.markFailedBySweep(manager, idsOf(failed));
        result.recovered = lost.length;
        result.settled = completed.length;
        for (const [queue, count] of countByQueue(lost)) this.metrics.jobsRecovered(queue, count);
      });
      result.retried = await this.retryFailed();
      if (result.recovered > 0) this.logger.warn({ recovered: result.recovered }, 're-added jobs that BullMQ had lost');
      if (result.retried > 0) this.logger.warn({ retried: result.retried }, 'running again jobs that had failed for good');
    } catch (error) {
      this.logger.warn({ err: error }, 'job relay sweep failed; retrying at the next sweep');
    }
    return result;
  }

  /** Failed jobs whose cool-down (JOB_RELAY_RETRY_FAILED_MS, doubling per failure) has passed: removed from BullMQ's failed set and added again. */
  private async retryFailed(): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const rows = await this.outboxRows.claimFailedDue(manager, this.config.backbone.relayRetryFailedMs, SWEEP_BATCH, MAX_FAILURES);
      if (rows.length === 0) return 0;
      await Promise.all(rows.map((row) => this.outbox.queue(row.queue).remove(row.id)));
      await this.outbox.add(rows);
      await this.outboxRows.markRetried(manager, idsOf(rows));
      for (const [queue, count] of countByQueue(rows)) this.metrics.jobsRecovered(queue, count);
      return rows.length;
    });
  }
}

function idsOf(rows: Array<{ id: string }>): string[] {
  return rows.map((row) => row.id);
}

function countByQueue(rows: Array<{ queue: string }>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.queue, (counts.get(row.queue) ?? 0) + 1);
  return counts;
}
