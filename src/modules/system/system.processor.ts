import { Processor, WorkerHost } from '@nestjs/bullmq';
import { OnApplicationBootstrap } from '@nestjs/common';
import { Job, UnrecoverableError } from 'bullmq';
import { QUEUES, STALLED_CHECK_MS } from '../../infra/queue/queues';
import { RetentionService } from './retention.service';
import { PurgeExpiredJob, PurgeExpiredResult, SYSTEM_JOBS, SystemQueue } from './system.queue';

/** Consumer of the `system` queue (worker role only). */
@Processor(QUEUES.system, { stalledInterval: STALLED_CHECK_MS })
export class SystemProcessor extends WorkerHost implements OnApplicationBootstrap {
  constructor(
    private readonly retention: RetentionService,
    private readonly systemQueue: SystemQueue,
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
      default:
        throw new UnrecoverableError(`unknown system job "${job.name}"`);
    }
  }
}
