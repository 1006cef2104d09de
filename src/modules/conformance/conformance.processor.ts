import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Job } from 'bullmq';
import { QUEUES, STALLED_CHECK_MS } from '../../infra/queue/queues';
import { ConformanceRunner } from './conformance-runner';
import { ConformanceRuns } from './conformance-runs.service';
import { FullRunJob } from './conformance.queue';
import { WebhookReceivers } from './webhook-receivers';

/** Runs full conformance suites (all six dimensions against the provider runtime) on the worker. */
@Processor(QUEUES.conformance, { concurrency: 2, stalledInterval: STALLED_CHECK_MS })
export class ConformanceProcessor extends WorkerHost {
  constructor(
    private readonly runner: ConformanceRunner,
    private readonly runs: ConformanceRuns,
    private readonly receivers: WebhookReceivers,
  ) {
    super();
  }

  async process(job: Job<FullRunJob>): Promise<{ score: number } | { skipped: true }> {
    if (!(await this.runs.start(job.data.confId))) return { skipped: true };
    try {
      const run = await this.runs.find(job.data.confId);
      const report = await this.runner.run({
        runtimeUrl: job.data.runtimeUrl,
        riskTier: job.data.riskTier,
        capabilities: job.data.capabilities,
        full: true,
        appId: run?.app_id,
        // The app's endpoint and secret as they are now; the secret is never part of the job.
        webhook: run ? await this.receivers.forApp(run.app_id) : undefined,
      });
      await this.runs.complete(job.data.confId, report);
      return { score: report.score };
    } catch (error) {
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) await this.runs.fail(job.data.confId, (error as Error).message);
      throw error;
    }
  }
}
