import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import { Queue } from 'bullmq';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import type { OutboxJob } from '../../infra/queue/job-outbox';
import { QUEUES } from '../../infra/queue/queues';
import { scheduleEvery } from '../../infra/queue/schedule-every';

export const WEBHOOK_JOBS = {
  drain: 'drain',
  /** One job per delivery, before drains replaced it: still run (as a drain of its app) when a deployment upgrades with some queued. */
  deliver: 'deliver',
  recover: 'recover',
  sweep: 'sweep',
} as const;

/** An endpoint to drain. Jobs queued before an app had several endpoints name the app: its primary endpoint is meant. */
export interface DrainJob {
  endpointId?: string;
  appId?: string;
}
export interface DeliverJob {
  deliveryId: string;
  appId?: string;
}
/** Re-sends an endpoint's failed deliveries; jobs queued before endpoints name the app (its primary endpoint). */
export interface RecoverJob {
  endpointId?: string;
  appId: string;
  since: string;
}
export type WebhookJob = DrainJob | DeliverJob | RecoverJob | Record<string, never>;

/**
 * Sends an endpoint's due deliveries (EndpointDrain). Recorded in the job
 * outbox with the deliveries that need it, one per endpoint per transaction;
 * a drain that finds another already running leaves it a note and ends. A few
 * BullMQ attempts cover a worker's transient failure (the database away
 * mid-drain); the webhook retry schedule itself is each delivery row's
 * `next_attempt_at`, which the drain wakes up for.
 */
export const DRAIN_JOB = {
  queue: QUEUES.webhookDelivery,
  name: WEBHOOK_JOBS.drain,
  opts: { attempts: 5, backoff: { type: 'exponential', delay: 1000 } },
} as const;

/** The drain jobs for the endpoints of some new pending deliveries: one per endpoint. */
export function drainJobs(endpointIds: Iterable<string>): OutboxJob[] {
  return [...new Set(endpointIds)].map((endpointId) => ({ ...DRAIN_JOB, data: { endpointId } }));
}

/** Producer of the `webhook-delivery` queue's recover and sweep jobs (deliveries go through the job outbox). */
@Injectable()
export class WebhookDeliveryQueue {
  constructor(
    @InjectQueue(QUEUES.webhookDelivery) private readonly queue: Queue<WebhookJob>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** One recovery per endpoint, instant and minute of asking: a retried request does not double the work. */
  async requestRecover(appId: string, endpointId: string, since: Date): Promise<string> {
    const minute = new Date().toISOString().slice(0, 16).replace(/[-:T]/g, '');
    const jobId = `recover.${endpointId}.${since.getTime()}.${minute}`;
    await this.queue.add(WEBHOOK_JOBS.recover, { appId, endpointId, since: since.toISOString() }, { jobId, attempts: 3 });
    return jobId;
  }

  /** The periodic signing-secret rotation reminders (scheduleEvery: one schedule whatever the number of worker starts). */
  async schedule(): Promise<void> {
    await scheduleEvery(this.queue, 'webhook-sweep', this.config.webhooks.sweepIntervalMs, { name: WEBHOOK_JOBS.sweep, data: {} });
  }
}
