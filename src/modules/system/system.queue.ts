import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { Queue } from 'bullmq';
import { QUEUES } from '../../infra/queue/queues';
import { scheduleEvery } from '../../infra/queue/schedule-every';
import { METRICS_ROLLUP_EVERY_MS } from '../runtime-bridge/capability-metrics.service';

export const SYSTEM_JOBS = {
  purgeExpired: 'purge-expired',
  /** The capability metrics rollup (CapabilityMetrics.rollup), every METRICS_ROLLUP_EVERY_MS. */
  rollUpCapabilityMetrics: 'roll-up-capability-metrics',
} as const;

/** The minutely lost-job sweep of earlier versions; its scheduler is removed at start-up (the job relay's sweep replaced it). */
const RETIRED_SCHEDULERS = ['requeue-stale.minutely'];

export interface PurgeExpiredJob {
  requestedBy: 'schedule' | 'operator';
}

export type PurgeExpiredResult = Record<string, number>;

/** Producer of the `system` queue. */
@Injectable()
export class SystemQueue {
  constructor(@InjectQueue(QUEUES.system) private readonly queue: Queue<PurgeExpiredJob, PurgeExpiredResult>) {}

  /**
   * Asks for a purge of expired rows. Requests within the same minute share one
   * job id, so a burst of requests (or a retried HTTP call) purges once.
   */
  async requestPurge(requestedBy: PurgeExpiredJob['requestedBy']): Promise<{ jobId: string }> {
    const minute = new Date().toISOString().slice(0, 16).replace(/[-:T]/g, '');
    const jobId = `${SYSTEM_JOBS.purgeExpired}.${minute}`;
    await this.queue.add(SYSTEM_JOBS.purgeExpired, { requestedBy }, { jobId });
    return { jobId };
  }

  /** Registers the hourly purge and the minutely metrics rollup (scheduleEvery: one schedule whatever the number of worker starts). */
  async schedule(): Promise<void> {
    const data = { requestedBy: 'schedule' as const };
    await scheduleEvery(this.queue, `${SYSTEM_JOBS.purgeExpired}.hourly`, 3_600_000, { name: SYSTEM_JOBS.purgeExpired, data });
    await scheduleEvery(this.queue, `${SYSTEM_JOBS.rollUpCapabilityMetrics}.every`, METRICS_ROLLUP_EVERY_MS, {
      name: SYSTEM_JOBS.rollUpCapabilityMetrics,
      data,
      opts: { attempts: 1, removeOnComplete: true, removeOnFail: 100 },
    });
    for (const id of RETIRED_SCHEDULERS) await this.queue.removeJobScheduler(id);
  }
}
