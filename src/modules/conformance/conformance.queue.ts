import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { Queue } from 'bullmq';
import { QUEUES } from '../../infra/queue/queues';
import { CapabilityDescriptor } from '../packages/capability-descriptor';

export interface FullRunJob {
  confId: string;
  runtimeUrl: string;
  riskTier: string;
  capabilities: CapabilityDescriptor[];
}

/** Producer of the `conformance` queue: one job per full run, keyed by the run id. */
@Injectable()
export class ConformanceQueue {
  constructor(@InjectQueue(QUEUES.conformance) private readonly queue: Queue<FullRunJob>) {}

  async enqueue(job: FullRunJob): Promise<void> {
    await this.queue.add('full-run', job, { jobId: job.confId, attempts: 2, backoff: { type: 'fixed', delay: 5000 } });
  }
}
