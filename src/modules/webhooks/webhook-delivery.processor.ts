import { Processor, WorkerHost } from '@nestjs/bullmq';
import { OnApplicationBootstrap } from '@nestjs/common';
import { DelayedError, Job, UnrecoverableError } from 'bullmq';
import { QUEUES } from '../../infra/queue/queues';
import { BackboneMetrics } from '../../infra/metrics/backbone-metrics';
import { DeliveryAttempts, SLOT_HOLD_MS } from './delivery-attempts';
import { EndpointSlots } from './endpoint-slots';
import { WebhookDeliveries } from './webhook-deliveries.service';
import { DeliverJob, RecoverJob, WEBHOOK_JOBS, WebhookDeliveryQueue, WebhookJob } from './webhook-delivery.queue';
import { WebhookMaintenance } from './webhook-maintenance';

/** Longest delivery timeout (30 s) plus a margin: a live worker renews the lock, a dead one frees it soon after. */
const LOCK_MS = SLOT_HOLD_MS;

/**
 * Consumer of the `webhook-delivery` queue (worker role only). A delivery's
 * job lives for its whole attempt chain: between attempts it is moved back to
 * delayed until the next attempt is due, keeping its id. The lock outlasts the
 * longest delivery timeout, so a slow receiver never gets a second concurrent
 * copy from a stalled-job re-run. A job whose endpoint has its share in flight
 * waits for a slot inside its worker (EndpointSlots) instead of being started
 * again, which is why the concurrency is well above the slots one endpoint has.
 */
@Processor(QUEUES.webhookDelivery, { concurrency: 64, lockDuration: LOCK_MS, stalledInterval: 5_000 })
export class WebhookDeliveryProcessor extends WorkerHost implements OnApplicationBootstrap {
  constructor(
    private readonly attempts: DeliveryAttempts,
    private readonly slots: EndpointSlots,
    private readonly deliveries: WebhookDeliveries,
    private readonly maintenance: WebhookMaintenance,
    private readonly queue: WebhookDeliveryQueue,
    private readonly metrics: BackboneMetrics,
  ) {
    super();
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.queue.schedule();
  }

  async process(job: Job<WebhookJob>, token?: string): Promise<unknown> {
    switch (job.name) {
      case WEBHOOK_JOBS.deliver:
        return this.deliver(job as Job<DeliverJob>, token);
      case WEBHOOK_JOBS.recover: {
        const { appId, since } = job.data as RecoverJob;
        return { replayed: await this.deliveries.recover(appId, new Date(since)) };
      }
      case WEBHOOK_JOBS.sweep:
        return this.maintenance.sweep();
      default:
        throw new UnrecoverableError(`unknown webhook job "${job.name}"`);
    }
  }

  private async deliver(job: Job<DeliverJob>, token?: string): Promise<unknown> {
    this.metrics.jobStarted(QUEUES.webhookDelivery);
    const { deliveryId } = job.data;
    const appId = job.data.appId ?? (await this.attempts.appOf(deliveryId));
    if (!appId) return { outcome: 'skipped' };
    const slot = await this.slots.take(appId, SLOT_HOLD_MS);
    if (!slot) {
      // Too many already wait for this endpoint here: come back shortly instead of holding a worker slot.
      this.metrics.jobRestarted(QUEUES.webhookDelivery);
      return this.delay(job, Date.now() + 200 + Math.floor(Math.random() * 300), token);
    }
    let result;
    try {
      result = await this.attempts.attempt(deliveryId);
    } finally {
      await this.slots.release(slot);
    }
    if (result.kind === 'retry' || result.kind === 'not_due') return this.delay(job, result.at.getTime(), token);
    return { outcome: result.kind === 'done' ? result.status : 'skipped' };
  }

  private async delay(job: Job, at: number, token?: string): Promise<never> {
    await job.moveToDelayed(at, token);
    throw new DelayedError();
  }
}
