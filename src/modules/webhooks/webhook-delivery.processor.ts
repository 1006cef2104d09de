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
      case WEBHOOK_JOBS.drain: {
        const { endpointId, appId } = job.data as DrainJob;
        const endpoint = endpointId ?? (appId ? await this.attempts.primaryEndpointOf(appId) : null);
        return endpoint ? this.drain(job, endpoint) : { outcome: 'skipped' };
      }
      case WEBHOOK_JOBS.deliver: {
        const endpoint = await this.attempts.endpointOf((job.data as DeliverJob).deliveryId);
        return endpoint ? this.drain(job, endpoint) : { outcome: 'skipped' };
      }
      case WEBHOOK_JOBS.recover: {
        const { endpointId, appId, since } = job.data as RecoverJob;
        const endpoint = endpointId ?? (await this.attempts.primaryEndpointOf(appId));
        return { replayed: endpoint ? await this.deliveries.recover(endpoint, new Date(since)) : 0 };
      }
      case WEBHOOK_JOBS.sweep:
        return this.maintenance.sweep();
      default:
        throw new UnrecoverableError(`unknown webhook job "${job.name}"`);
    }
  }

  private drain(job: Job, endpointId: string): Promise<unknown> {
    this.metrics.jobStarted(QUEUES.webhookDelivery);
    // The holder is the job: a run of the same job after its worker died takes the lease over.
    return this.drains.drain(endpointId, `job:${job.id}`);
  }
}
