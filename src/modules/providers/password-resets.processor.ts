import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Job } from 'bullmq';
import { QUEUES, STALLED_CHECK_MS } from '../../infra/queue/queues';
import type { PasswordResetJob } from './password-resets.queue';
import { PasswordResets } from './password-resets.service';

/** Consumer of the `password-resets` queue (worker role only): looks the address up and mails a link when it has an active account. */
@Processor(QUEUES.passwordResets, { stalledInterval: STALLED_CHECK_MS })
export class PasswordResetsProcessor extends WorkerHost {
  constructor(private readonly resets: PasswordResets) {
    super();
  }

  async process(job: Job<PasswordResetJob>): Promise<{ status: string }> {
    return { status: await this.resets.sendLink(job.id!, job.data.email) };
  }
}
