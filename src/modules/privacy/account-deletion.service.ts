import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { JobOutbox } from '../../infra/queue/job-outbox';
import { AuthenticatedUser } from '../access/authenticated-user';
import { SessionCache } from '../access/session-cache';
import { Sessions } from '../access/sessions.service';
import { UsersService } from '../auth/users.service';
import { eraseAccountJob } from './account-deletion.queue';
import { AccountDeletionsRepository } from './account-deletions.repository';
import { AccountDeletionDto } from './dto/account.dto';

export const ACCOUNT_DELETION_MESSAGE =
  'Your account is being deleted: you were signed out everywhere, and everything personal the service holds about you is being erased. ' +
  'Signing in again creates a new, empty account.';

/**
 * `DELETE /v1/me`. The request does what must hold at once, in one
 * transaction: it records the tombstone, lets go of the user's identity (a
 * new sign-in creates a new user), revokes every session (their tokens and
 * gateway sockets stop working on every instance) and records the erasure
 * job in the job outbox, so the job exists if and only if the request
 * committed. The erasure itself (AccountEraser) runs in the worker.
 */
@Injectable()
export class AccountDeletion {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly deletions: AccountDeletionsRepository,
    private readonly users: UsersService,
    private readonly sessions: Sessions,
    private readonly checkedSessions: SessionCache,
    private readonly jobs: JobOutbox,
  ) {}

  /**
   * Idempotent: the user row is locked first, so of concurrent requests one
   * records the deletion and the others answer the same tombstone.
   */
  async request(user: AuthenticatedUser): Promise<AccountDeletionDto> {
    const { deletion, jobId } = await this.dataSource.transaction(async (manager) => {
      if (!(await this.users.lockForAccountDeletion(manager, user.id))) throw new ApiError('UNAUTHORIZED', 'This user no longer exists');
      const recorded = await this.deletions.insertRequested(manager, user.id, user.profile.createdAt);
      if (!recorded) return { deletion: (await this.deletions.find(manager, user.id))!, jobId: null };
      await this.users.releaseIdentity(manager, user.id);
      await this.sessions.revokeAllOf(manager, user.id, null);
      const [id] = await this.jobs.record(manager, eraseAccountJob(user.id));
      return { deletion: recorded, jobId: id };
    });
    await this.checkedSessions.forgetUserEverywhere(user.id);
    if (jobId) await this.jobs.relayNow([jobId]);
    return {
      id: user.id,
      status: deletion.erasedAt ? 'erased' : 'erasing',
      requested_at: deletion.requestedAt.toISOString(),
      message: ACCOUNT_DELETION_MESSAGE,
    };
  }
}
