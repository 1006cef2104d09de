import { QUEUES } from '../../infra/queue/queues';
import type { OutboxJob } from '../../infra/queue/job-outbox';

/** One `send-link` job per reset request, whether or not the address has an account. */
export interface PasswordResetJob {
  /** The address as the requester gave it. */
  email: string;
}

/** The job id is also the id of the link it creates, so a retried job finds its link and sends nothing twice. */
export function passwordResetJob(id: string, email: string): OutboxJob {
  return {
    queue: QUEUES.passwordResets,
    name: 'send-link',
    data: { email } satisfies PasswordResetJob,
    id,
    opts: { attempts: 5, backoff: { type: 'exponential', delay: 2_000 } },
  };
}
