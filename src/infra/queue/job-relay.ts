import { WorkerHost } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { Job, JobsOptions, Worker } from 'bullmq';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { PgListener } from '../database/pg-listener';
import { BackboneMetrics } from '../metrics/backbone-metrics';
import { JobOutbox } from './job-outbox';
import { QueueName } from './queues';

/** PostgreSQL channel the job_outbox trigger notifies on commit (migration JobOutbox1764001400000). */
export const JOB_OUTBOX_CHANNEL = 'job_outbox';

/** Finished jobs are settled (their rows deleted) in one statement at most this often. */
const SETTLE_EVERY_MS = 100;
const SWEEP_BATCH = 1_000;
const LIVE_STATES = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/**
 * Worker role: moves committed job_outbox rows to BullMQ (several relays at
 * once, woken by NOTIFY on commit), deletes a row once its job has finished,
 * and runs the one safety sweep of the backbone: rows whose wake-up was
 * missed are relayed, and a relayed row whose job BullMQ no longer holds (a
 * Redis restart without persistence, a job removed by hand) is added again.
 * No area keeps a sweeper of its own.
 */
@Injectable()
export class JobRelay implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(JobRelay.name);
  private readonly listener: PgListener;
  private readonly running = new Set<Promise<void>>();
  private wakeAgain = 0;
  private sweepTimer: NodeJS.Timeout | null = null;
  private settleTimer: NodeJS.Timeout | null = null;
  private finished: string[] = [];
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly outbox: JobOutbox,
    private readonly discovery: DiscoveryService,
    private readonly metrics: BackboneMetrics,
  ) {
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
    await Promise.all([...this.running]);
    await this.settle();
    await this.listener.stop();
  }

  /** Starts relays up to the configured number; a wake while all run makes them go round again. */
  wake(): void {
    if (this.stopped) return;
    if (this.running.size >= this.config.backbone.relays) {
      this.wakeAgain = this.config.backbone.relays;
      return;
    }
    const run: Promise<void> = this.drain()
      .catch((error: unknown) => this.logger.warn({ err: error }, 'job relay failed; retrying at the next wake or sweep'))
      .finally(() => {
        this.running.delete(run);
        if (this.wakeAgain > 0) {
          this.wakeAgain -= 1;
          this.wake();
        }
      });
    this.running.add(run);
    // A full batch suggests more: let the other relays start on the next one at once.
    if (this.running.size < this.config.backbone.relays) setImmediate(() => this.wakeIfBusy());
  }

  private wakeIfBusy(): void {
    if (this.running.size > 0 && this.running.size < this.config.backbone.relays) this.wake();
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

  /** A job that has finished for good (completed, or failed with no retry left) no longer needs its row. */
  private watchWorkers(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const host = wrapper.instance as unknown;
      if (!(host instanceof WorkerHost)) continue;
      const worker = (host as WorkerHost<Worker>).worker;
      worker.on('completed', (job: Job) => this.finish(job));
      worker.on('failed', (job: Job | undefined) => {
        if (job?.finishedOn) this.finish(job);
      });
    }
  }

  private finish(job: Job): void {
    if (job.id) this.finished.push(job.id);
  }

  private async settle(): Promise<void> {
    if (this.finished.length === 0) return;
    const ids = this.finished;
    this.finished = [];
    try {
      await this.dataSource.query(`DELETE FROM job_outbox WHERE id = ANY($1) AND relayed_at IS NOT NULL`, [ids]);
    } catch (error) {
      // The sweep finds these rows finished in BullMQ and deletes them later.
      this.logger.warn({ err: error, count: ids.length }, 'could not settle finished jobs; the sweep will');
    }
  }

  /**
   * The safety sweep. First anything committed but not relayed (a missed
   * NOTIFY, Redis away at the time). Then relayed rows unchecked for a while:
   * a job BullMQ still holds is left alone, one that finished is settled, one
   * it has lost is added again.
   */
  async sweep(): Promise<{ relayed: number; recovered: number; settled: number }> {
    if (this.stopped) return { relayed: 0, recovered: 0, settled: 0 };
    let relayed = 0;
    let recovered = 0;
    let settled = 0;
    try {
      relayed = (await this.outbox.relay(this.config.backbone.relayBatchSize)).length;
      await this.dataSource.transaction(async (manager) => {
        const rows: Array<{ id: string; queue: QueueName; name: string; data: Record<string, unknown>; opts: JobsOptions }> =
          await manager.query(
            `SELECT id, queue, name, data, opts FROM job_outbox
              WHERE relayed_at IS NOT NULL AND checked_at < now() - make_interval(secs => $1::double precision / 1000)
              ORDER BY checked_at LIMIT $2
              FOR UPDATE SKIP LOCKED`,
            [this.config.backbone.relayCheckAfterMs, SWEEP_BATCH],
          );
        if (rows.length === 0) return;
        const states = await Promise.all(rows.map((row) => this.outbox.queue(row.queue).getJobState(row.id)));
        const lost = rows.filter((_row, i) => states[i] === 'unknown');
        const done = rows.filter((_row, i) => states[i] === 'completed' || states[i] === 'failed');
        const live = rows.filter((_row, i) => LIVE_STATES.has(states[i]));
        if (lost.length > 0) await this.outbox.add(lost);
        await manager.query(`UPDATE job_outbox SET checked_at = now() WHERE id = ANY($1)`, [[...live, ...lost].map((r) => r.id)]);
        if (done.length > 0) await manager.query(`DELETE FROM job_outbox WHERE id = ANY($1)`, [done.map((r) => r.id)]);
        recovered = lost.length;
        settled = done.length;
        for (const [queue, count] of countByQueue(lost)) this.metrics.jobsRecovered(queue, count);
      });
      if (recovered > 0) this.logger.warn({ recovered }, 're-added jobs that BullMQ had lost');
    } catch (error) {
      this.logger.warn({ err: error }, 'job relay sweep failed; retrying at the next sweep');
    }
    return { relayed, recovered, settled };
  }
}

function countByQueue(rows: Array<{ queue: string }>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.queue, (counts.get(row.queue) ?? 0) + 1);
  return counts;
}
