import { Processor, WorkerHost } from '@nestjs/bullmq';
import { OnApplicationBootstrap } from '@nestjs/common';
import { Job, UnrecoverableError } from 'bullmq';
import { QUEUES, STALLED_CHECK_MS } from '../../infra/queue/queues';
import { CapabilityMetrics } from '../runtime-bridge/capability-metrics.service';
import { RetentionService } from './retention.service';
import { PurgeExpiredJob, PurgeExpiredResult, SYSTEM_JOBS, SystemQueue } from './system.queue';

/** Consumer of the `system` queue (worker role only). */
@Processor(QUEUES.system, { stalledInterval: STALLED_CHECK_MS })
export class SystemProcessor extends WorkerHost implements OnApplicationBootstrap {
  constructor(
    private readonly retention: RetentionService,
    private readonly systemQueue: SystemQueue,
    private readonly capabilityMetrics: CapabilityMetrics,
  ) {
    super();
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.systemQueue.schedule();
  }

  async process(job: Job<PurgeExpiredJob>): Promise<PurgeExpiredResult> {
    switch (job.name) {
      case SYSTEM_JOBS.purgeExpired:
        return this.retention.purgeExpired();
      case SYSTEM_JOBS.rollUpCapabilityMetrics:
        return { minutesRolledUp: (await this.capabilityMetrics.rollup()).minutes };
      default:
        throw new UnrecoverableError(`unknown system job "${job.name}"`);
    }
  }
}
