import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable } from '@nestjs/common';
import { Queue } from 'bullmq';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { QUEUES, RUNTIME_BRIDGE_JOBS } from '../../infra/queue/queues';
import { scheduleEvery } from '../../infra/queue/schedule-every';

export { RUNTIME_BRIDGE_JOBS } from '../../infra/queue/queues';

/**
 * Producer of the `runtime-bridge` queue: the repeating tick of the state
 * polling scheduler. (An install's first poll, `poll-install`, is recorded
 * by marketplace through the job outbox with the install's commit.)
 */
@Injectable()
export class RuntimeBridgeQueue {
  constructor(
    @InjectQueue(QUEUES.runtimeBridge) private readonly queue: Queue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The tick, every RUNTIME_TICK_MS (scheduleEvery: one schedule whatever the number of worker starts). */
  async schedule(): Promise<void> {
    await scheduleEvery(this.queue, `${RUNTIME_BRIDGE_JOBS.statePollTick}.every`, this.config.runtimeBridge.tickMs, {
      name: RUNTIME_BRIDGE_JOBS.statePollTick,
      data: {},
      opts: { attempts: 1, removeOnComplete: true, removeOnFail: 100 },
    });
  }
}
