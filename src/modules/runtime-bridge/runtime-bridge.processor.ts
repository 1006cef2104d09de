import { Processor, WorkerHost } from '@nestjs/bullmq';
import { OnApplicationBootstrap } from '@nestjs/common';
import { Job, UnrecoverableError } from 'bullmq';
import { QUEUES, STALLED_CHECK_MS } from '../../infra/queue/queues';
import { RUNTIME_BRIDGE_JOBS, RuntimeBridgeQueue } from './runtime-bridge.queue';
import { StatePoller } from './state-poller';

/** Consumer of the `runtime-bridge` queue (worker role only): the state polling tick and an install's first poll. */
@Processor(QUEUES.runtimeBridge, { stalledInterval: STALLED_CHECK_MS })
export class RuntimeBridgeProcessor extends WorkerHost implements OnApplicationBootstrap {
  constructor(
    private readonly poller: StatePoller,
    private readonly queue: RuntimeBridgeQueue,
  ) {
    super();
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.queue.schedule();
  }

  async process(job: Job): Promise<unknown> {
    if (job.name === RUNTIME_BRIDGE_JOBS.statePollTick) return this.poller.pollDue();
    if (job.name === RUNTIME_BRIDGE_JOBS.pollInstall) {
      const { installId } = job.data as { installId?: unknown };
      if (typeof installId !== 'string') throw new UnrecoverableError('poll-install job without an installId');
      return this.poller.pollInstall(installId);
    }
    throw new UnrecoverableError(`unknown runtime-bridge job "${job.name}"`);
  }
}
