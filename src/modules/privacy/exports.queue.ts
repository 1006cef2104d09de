import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { JobState, Queue } from 'bullmq';
import { QUEUES } from '../../infra/queue/queues';

export const EXPORT_JOBS = {
  build: 'build-export',
} as const;

export interface BuildExportJob {
  exportId: string;
}

export interface BuildExportResult {
  exportId: string;
  outcome: 'built' | 'skipped';
  /** Why nothing was done, for a skipped job. */
  reason?: string;
  bytes?: number;
}

/** Longest an HTTP request waits for Redis to accept a job before leaving it to the pending sweep. */
const ENQUEUE_TIMEOUT_MS = 2_000;

/** Producer of the `exports` queue. */
@Injectable()
export class ExportsQueue {
  constructor(@InjectQueue(QUEUES.exports) private readonly queue: Queue<BuildExportJob, BuildExportResult>) {}

  /**
   * Asks for the export to be built. The job id is the export id, so a
   * duplicate or repeated enqueue (a retried request, the pending sweep) adds
   * nothing while the job is known. Bounded in time: the queue connection
   * retries forever while Redis is away, and an HTTP request must not.
   */
  async enqueueBuild(exportId: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`enqueue did not complete within ${ENQUEUE_TIMEOUT_MS} ms`)), ENQUEUE_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.queue.add(EXPORT_JOBS.build, { exportId }, { jobId: exportId }), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async stateOf(exportId: string): Promise<JobState | 'unknown'> {
    return this.queue.getJobState(exportId);
  }

  async failedReasonOf(exportId: string): Promise<string | undefined> {
    return (await this.queue.getJob(exportId))?.failedReason;
  }

  /** Drops a finished job that left its export pending and enqueues it again. */
  async replace(exportId: string): Promise<void> {
    await this.queue.remove(exportId);
    await this.enqueueBuild(exportId);
  }
}
