import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import { JobState, Queue } from 'bullmq';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { QUEUES } from '../../infra/queue/queues';

export const WEBHOOK_JOBS = {
  deliver: 'deliver',
  recover: 'recover',
  sweep: 'sweep',
} as const;

export interface DeliverJob {
  deliveryId: string;
}
export interface RecoverJob {
  appId: string;
  since: string;
}
export type WebhookJob = DeliverJob | RecoverJob | Record<string, never>;

const LIVE_STATES: ReadonlyArray<JobState | 'unknown'> = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'];

/**
 * Producer of the `webhook-delivery` queue. A delivery has one job for its
 * whole attempt chain, keyed by the delivery id, so duplicate enqueues (the
 * fan-out retried, the sweeper) never send it twice at once.
 */
@Injectable()
export class WebhookDeliveryQueue {
  constructor(
    @InjectQueue(QUEUES.webhookDelivery) private readonly queue: Queue<WebhookJob>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async enqueue(deliveryId: string): Promise<void> {
    // Callers enqueue committed rows (the fan-out after its commit, replay, the sweeper); a missing row still retries shortly.
    await this.queue.add(WEBHOOK_JOBS.deliver, { deliveryId }, { jobId: deliveryId, attempts: 5, backoff: { type: 'fixed', delay: 500 } });
  }

  /** Enqueues again unless a worker will still run (or is running) the job; answers whether it did. */
  async ensureLive(deliveryId: string): Promise<boolean> {
    const state = await this.queue.getJobState(deliveryId);
    if (LIVE_STATES.includes(state)) return false;
    if (state === 'completed' || state === 'failed') await this.queue.remove(deliveryId);
    await this.enqueue(deliveryId);
    return true;
  }

  /** One recovery per app, instant and minute of asking: a retried request does not double the work. */
  async requestRecover(appId: string, since: Date): Promise<string> {
    const minute = new Date().toISOString().slice(0, 16).replace(/[-:T]/g, '');
    const jobId = `recover.${appId}.${since.getTime()}.${minute}`;
    await this.queue.add(WEBHOOK_JOBS.recover, { appId, since: since.toISOString() }, { jobId, attempts: 3 });
    return jobId;
  }

  /** The sweep for lost jobs and secret reminders. Idempotent: upserting a scheduler id replaces it. */
  async schedule(): Promise<void> {
    await this.queue.upsertJobScheduler(
      'webhook-sweep',
      { every: this.config.webhooks.sweepIntervalMs },
      { name: WEBHOOK_JOBS.sweep, data: {} },
    );
  }
}
