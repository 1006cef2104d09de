import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { ProblemError } from '../../common/errors/problem-error';
import { newId } from '../../common/ids';
import { InstallsService } from '../marketplace/installs.service';
import { ExecutionFailure } from './execution-failure';
import { ActionConfirmations, toConfirmationDto } from './action-confirmations.service';
import { CapabilityExecutor } from './capability-executor.service';

/** The user's answer to a pending action: confirm runs it on the runtime (once), cancel drops it. */
@Injectable()
export class ActionDecisions {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly confirmations: ActionConfirmations,
    private readonly executor: CapabilityExecutor,
    private readonly installs: InstallsService,
  ) {}

  async confirm(userId: string, confirmationId: string) {
    // Claim the confirmation in a short transaction so two confirms cannot both call the runtime.
    const claimed = await this.dataSource.transaction(async (manager) => {
      const row = await this.confirmations.lockOwned(manager, userId, confirmationId);
      if (row.status === 'completed') return { done: true, row };
      if (row.status !== 'pending') throw new ApiError('CONFLICT', `Confirmation ${confirmationId} is ${row.status}`);
      const executing = await this.confirmations.setStatus(row.id, 'executing', {}, manager);
      await this.confirmations.recordDecision(manager, executing);
      return { done: false, row: executing };
    });
    if (claimed.done) return toConfirmationDto(claimed.row);
    const row = claimed.row;
    const target = await this.installs.executionTarget({ installId: row.install_id });
    const capability = target?.capabilities.find((c) => c.name === row.capability);
    if (!target || !capability) {
      await this.confirmations.setStatus(row.id, 'failed', {
        error: { code: 'not_found', message: 'The install was removed' },
      });
      throw new ApiError('NOT_FOUND', 'The install or capability of this confirmation no longer exists');
    }
    if (target.package_suspended || target.developer_suspended) {
      await this.confirmations.setStatus(row.id, 'failed', {
        error: { code: 'account_suspended', message: 'Package suspended' },
      });
      throw new ProblemError('account_suspended', 'The package of this action is suspended');
    }
    try {
      const success = await this.executor.runAction(newId('req'), target, capability, row.input, row.id, row.idempotency_key);
      const message = typeof success.body.message === 'string' ? success.body.message : null;
      return toConfirmationDto(await this.confirmations.setStatus(row.id, 'completed', { result: success.body.result, message }));
    } catch (error) {
      if (error instanceof ExecutionFailure && error.retryInMs !== undefined) {
        // The runtime asked to be called later (Retry-After): the user can confirm again then, with the same key.
        await this.confirmations.reopen(row.id);
        throw error;
      }
      const problem =
        error instanceof ProblemError ? { code: error.code, message: error.detail, ...error.extras } : { code: 'execution_failed' };
      await this.confirmations.setStatus(row.id, 'failed', { error: problem });
      throw error;
    }
  }

  async cancel(userId: string, confirmationId: string) {
    return this.dataSource.transaction(async (manager) => {
      const row = await this.confirmations.lockOwned(manager, userId, confirmationId);
      if (row.status === 'cancelled') return toConfirmationDto(row);
      if (row.status !== 'pending')
        throw new ApiError('CONFLICT', `Confirmation ${confirmationId} is ${row.status} and can no longer be cancelled`);
      const cancelled = await this.confirmations.setStatus(row.id, 'cancelled', {}, manager);
      await this.confirmations.recordDecision(manager, cancelled);
      return toConfirmationDto(cancelled);
    });
  }
}
