import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import { Queue } from 'bullmq';
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
  /** Lets the worker take the endpoint's concurrency slot before it reads anything. */
  appId: string;
}
export interface RecoverJob {
  appId: string;
  since: string;
}
export type WebhookJob = DeliverJob | RecoverJob | Record<string, never>;

/**
 * One job per delivery for its whole attempt chain, job id = delivery id,
 * recorded in the job outbox with the delivery row. A few BullMQ attempts
 * cover a worker's transient failure (the database away mid-attempt); the
 * webhook retry schedule itself is the delivery row's `next_attempt_at`.
 */
export const DELIVER_JOB = {
  queue: QUEUES.webhookDelivery,
  name: WEBHOOK_JOBS.deliver,
  opts: { attempts: 5, backoff: { type: 'exponential', delay: 1000 } },
} as const;

/** Producer of the `webhook-delivery` queue's recover and sweep jobs (deliveries go through the job outbox). */
@Injectable()
export class WebhookDeliveryQueue {
  constructor(
    @InjectQueue(QUEUES.webhookDelivery) private readonly queue: Queue<WebhookJob>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** One recovery per app, instant and minute of asking: a retried request does not double the work. */
  async requestRecover(appId: string, since: Date): Promise<string> {
    const minute = new Date().toISOString().slice(0, 16).replace(/[-:T]/g, '');
    const jobId = `recover.${appId}.${since.getTime()}.${minute}`;
    await this.queue.add(WEBHOOK_JOBS.recover, { appId, since: since.toISOString() }, { jobId, attempts: 3 });
    return jobId;
  }

  /** The periodic signing-secret rotation reminders. Idempotent: upserting a scheduler id replaces it. */
  async schedule(): Promise<void> {
    await this.queue.upsertJobScheduler(
      'webhook-sweep',
      { every: this.config.webhooks.sweepIntervalMs },
      { name: WEBHOOK_JOBS.sweep, data: {} },
    );
  }
}
