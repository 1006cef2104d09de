import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Job, UnrecoverableError } from 'bullmq';
import { QUEUES, STALLED_CHECK_MS } from '../../infra/queue/queues';
import { ACCOUNT_DELETION_JOBS, EraseAccountJob, EraseAccountResult } from './account-deletion.queue';
import { AccountEraser } from './account-eraser.service';

/** Consumer of the `account-deletion` queue (worker role only). BullMQ retries a failed erasure with backoff; it is idempotent. */
@Processor(QUEUES.accountDeletion, { stalledInterval: STALLED_CHECK_MS })
export class AccountDeletionProcessor extends WorkerHost {
  constructor(private readonly eraser: AccountEraser) {
    super();
  }

  async process(job: Job<EraseAccountJob, EraseAccountResult>): Promise<EraseAccountResult> {
    if (job.name !== ACCOUNT_DELETION_JOBS.erase) throw new UnrecoverableError(`unknown account-deletion job "${job.name}"`);
    return this.eraser.erase(job.data.userId);
  }
}
