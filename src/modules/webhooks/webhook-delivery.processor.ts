import { Processor, WorkerHost } from '@nestjs/bullmq';
import { OnApplicationBootstrap } from '@nestjs/common';
import { DelayedError, Job, UnrecoverableError } from 'bullmq';
import { QUEUES } from '../../infra/queue/queues';
import { DeliveryAttempts } from './delivery-attempts';
import { EndpointSlots } from './endpoint-slots';
import { WebhookDeliveries } from './webhook-deliveries.service';
import { DeliverJob, RecoverJob, WEBHOOK_JOBS, WebhookDeliveryQueue, WebhookJob } from './webhook-delivery.queue';
import { WebhookMaintenance } from './webhook-maintenance';

/** Longest delivery timeout (30 s) plus a margin: a live worker renews the lock, a dead one frees it soon after. */
const LOCK_MS = 35_000;

/**
 * Consumer of the `webhook-delivery` queue (worker role only). A delivery's
 * job lives for its whole attempt chain: between attempts it is moved back to
 * delayed until the next attempt is due, keeping its id. The lock outlasts the
 * longest delivery timeout, so a slow receiver never gets a second concurrent
 * copy from a stalled-job re-run.
 */
@Processor(QUEUES.webhookDelivery, { concurrency: 32, lockDuration: LOCK_MS, stalledInterval: 5_000 })
export class WebhookDeliveryProcessor extends WorkerHost implements OnApplicationBootstrap {
  constructor(
    private readonly attempts: DeliveryAttempts,
    private readonly slots: EndpointSlots,
    private readonly deliveries: WebhookDeliveries,
    private readonly maintenance: WebhookMaintenance,
    private readonly queue: WebhookDeliveryQueue,
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
    const delivery = await this.attempts.load(job.data.deliveryId);
    // Not visible yet (the fan-out transaction has not committed) or rolled back: BullMQ retries a few times.
    if (!delivery) throw new Error(`delivery ${job.data.deliveryId} not found`);
    if (delivery.status !== 'pending') return { outcome: 'skipped' };
    if (delivery.next_attempt_at.getTime() > Date.now() + 50) return this.delay(job, delivery.next_attempt_at.getTime(), token);

    const holdMs = (await this.attempts.timeoutOf(delivery.app_id)) + 5_000;
    if (!(await this.slots.acquire(delivery.app_id, delivery.id, holdMs))) {
      // The endpoint has its share in flight: come back shortly instead of holding a worker slot.
      return this.delay(job, Date.now() + 100 + Math.floor(Math.random() * 200), token);
    }
    let result;
    try {
      result = await this.attempts.attempt(delivery);
    } finally {
      await this.slots.release(delivery.app_id, delivery.id);
    }
    if (result.kind === 'retry' || result.kind === 'not_due') return this.delay(job, result.at.getTime(), token);
    return { outcome: result.kind === 'done' ? result.status : 'skipped' };
  }

  private async delay(job: Job, at: number, token?: string): Promise<never> {
    await job.moveToDelayed(at, token);
    throw new DelayedError();
  }
}
