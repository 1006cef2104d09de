import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import { Queue } from 'bullmq';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { QUEUES, RUNTIME_BRIDGE_JOBS } from '../../infra/queue/queues';

export { RUNTIME_BRIDGE_JOBS } from '../../infra/queue/queues';

/** Producer of the `runtime-bridge` queue: the repeating tick of the state polling scheduler. */
@Injectable()
export class RuntimeBridgeQueue {
  constructor(
    @InjectQueue(QUEUES.runtimeBridge) private readonly queue: Queue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Idempotent: upserting the scheduler id replaces it, so every worker start registers the same single tick. */
  async schedule(): Promise<void> {
    await this.queue.upsertJobScheduler(
      `${RUNTIME_BRIDGE_JOBS.statePollTick}.every`,
      { every: this.config.runtimeBridge.tickMs },
      { name: RUNTIME_BRIDGE_JOBS.statePollTick, data: {}, opts: { attempts: 1, removeOnComplete: true, removeOnFail: 100 } },
    );
  }
}
