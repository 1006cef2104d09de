import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import { Job, UnrecoverableError } from 'bullmq';
import { QUEUES, STALLED_CHECK_MS } from '../../infra/queue/queues';
import { ExportsService } from './exports.service';
import { BuildExportJob, BuildExportResult, EXPORT_JOBS } from './exports.queue';
import { SoulExportBuilder } from './soul-export.builder';

/** Consumer of the `exports` queue (worker role only). */
@Processor(QUEUES.exports, { stalledInterval: STALLED_CHECK_MS })
export class ExportsProcessor extends WorkerHost {
  private readonly logger = new Logger(ExportsProcessor.name);

  constructor(
    private readonly builder: SoulExportBuilder,
    private readonly exports: ExportsService,
  ) {
    super();
  }

  async process(job: Job<BuildExportJob, BuildExportResult>): Promise<BuildExportResult> {
    if (job.name !== EXPORT_JOBS.build) throw new UnrecoverableError(`unknown exports job "${job.name}"`);
    try {
      return await this.builder.build(job.data.exportId);
    } catch (error) {
      // BullMQ retries with the default backoff; only the last attempt settles the row,
      // here rather than in a `failed` listener, so it is written before the job is.
      const message = error instanceof Error ? error.message : String(error);
      const last = error instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      this.logger.warn({ exportId: job.data.exportId, attempt: job.attemptsMade + 1, last }, `export build failed: ${message}`);
      if (last) await this.exports.markFailed(job.data.exportId, message);
      throw error;
    }
  }

  /**
   * A job that failed for good without running its last attempt's handler
   * (stalled too often: its worker kept dying) still settles its export.
   */
  @OnWorkerEvent('failed')
  async onFailed(job: Job<BuildExportJob> | undefined, error: Error): Promise<void> {
    if (!job?.finishedOn || job.name !== EXPORT_JOBS.build) return;
    await this.exports.markFailed(job.data.exportId, error.message).catch((markError: unknown) => {
      this.logger.warn({ err: markError, exportId: job.data.exportId }, 'could not mark the export failed');
    });
  }
}
