import { Processor, WorkerHost } from '@nestjs/bullmq';
import { OnApplicationBootstrap } from '@nestjs/common';
import { Job, UnrecoverableError } from 'bullmq';
import { QUEUES } from '../../infra/queue/queues';
import { BackboneMetrics } from '../../infra/metrics/backbone-metrics';
import { CLAIM_LEASE_MS, DeliveryAttempts } from './delivery-attempts';
import { EndpointDrain } from './endpoint-drain';
import { WebhookDeliveries } from './webhook-deliveries.service';
import { DeliverJob, DrainJob, RecoverJob, WEBHOOK_JOBS, WebhookDeliveryQueue, WebhookJob } from './webhook-delivery.queue';
import { WebhookMaintenance } from './webhook-maintenance';

/**
 * Consumer of the `webhook-delivery` queue (worker role only). A drain job
 * sends one endpoint's due deliveries (EndpointDrain); the lock outlasts the
 * longest delivery timeout and BullMQ renews it while the drain runs, so a
 * live drain is never run a second time, and a dead one's job is run again
 * soon after. Most drain jobs end at once (another drain of the endpoint
 * runs and takes their note), so the concurrency is well above the number
 * of endpoints one worker drains at a time.
 */
@Processor(QUEUES.webhookDelivery, { concurrency: 64, lockDuration: CLAIM_LEASE_MS, stalledInterval: 5_000 })
export class WebhookDeliveryProcessor extends WorkerHost implements OnApplicationBootstrap {
  constructor(
    private readonly drains: EndpointDrain,
    private readonly attempts: DeliveryAttempts,
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

  async process(job: Job<WebhookJob>): Promise<unknown> {
    switch (job.name) {
      case WEBHOOK_JOBS.drain:
        return this.drain(job, (job.data as DrainJob).appId);
      case WEBHOOK_JOBS.deliver: {
        const { deliveryId, appId } = job.data as DeliverJob;
        const app = appId ?? (await this.attempts.appOf(deliveryId));
        return app ? this.drain(job, app) : { outcome: 'skipped' };
      }
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

  private drain(job: Job, appId: string): Promise<unknown> {
    this.metrics.jobStarted(QUEUES.webhookDelivery);
    // The holder is the job: a run of the same job after its worker died takes the lease over.
    return this.drains.drain(appId, `job:${job.id}`);
  }
}
