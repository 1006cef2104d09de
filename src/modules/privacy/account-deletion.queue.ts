import { QUEUES } from '../../infra/queue/queues';

export const ACCOUNT_DELETION_JOBS = {
  erase: 'erase-account',
} as const;

export interface EraseAccountJob {
  userId: string;
}

export interface EraseAccountResult {
  userId: string;
  outcome: 'erased' | 'skipped';
  /** Why nothing was done, for a skipped job. */
  reason?: string;
  /** Installs ended with `install.removed` (reason `account_deleted`). */
  installsRemoved?: number;
}

/**
 * The erasure job of one account, recorded in the job outbox with the
 * deletion request. Its id is derived from the user: a repeated record, a
 * relay retry or a duplicate add is the same job, and the job itself does
 * nothing once the tombstone says the account was erased.
 */
export const eraseAccountJob = (userId: string) =>
  ({
    queue: QUEUES.accountDeletion,
    name: ACCOUNT_DELETION_JOBS.erase,
    id: `erase-account-${userId}`,
    data: { userId } satisfies EraseAccountJob,
    opts: { attempts: 5, backoff: { type: 'exponential', delay: 1_000 } },
  }) as const;
