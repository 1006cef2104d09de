import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ProblemError } from '../../common/errors/problem-error';
import { isId } from '../../common/ids';
import { MailOutbox } from '../../infra/mail/mail-outbox';
import { PlatformStandings } from './auth/platform-standings';
import { DevelopersRepository, SuspensionRow } from './developers.repository';
import { OperatorDeveloperDto } from './dto/operator.dto';

const toDto = (row: SuspensionRow): OperatorDeveloperDto => ({
  id: row.id,
  company_name: row.company_name,
  email: row.email,
  status: row.status,
  suspended_at: row.suspended_at?.toISOString() ?? null,
  suspension_reason: row.suspension_reason,
});

/**
 * Operator suspension of developer accounts. A suspended account's console
 * and app tokens, its logins and its token grants all answer 403
 * `account_suspended` (the status is read on every call, so on every
 * instance at once); reinstating lifts it. The developer is told by mail,
 * written in the same transaction.
 */
@Injectable()
export class DeveloperSuspensions {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly mail: MailOutbox,
    private readonly developers: DevelopersRepository,
    private readonly standings: PlatformStandings,
  ) {}

  async suspend(developerId: string, reason: string): Promise<OperatorDeveloperDto> {
    const suspended = await this.dataSource.transaction(async (manager) => {
      const row = isId(developerId, 'dev') ? await this.developers.suspend(manager, developerId, reason) : null;
      if (!row) throw await this.whyNot(developerId, 'already suspended');
      await this.mail.enqueue(manager, {
        to: row.email,
        subject: 'Your developer account is suspended',
        text: `Your developer account (${row.company_name}) is suspended: ${reason}\nIts console sessions, app tokens and token grants are refused until it is reinstated. Contact support to request reinstatement.`,
      });
      return toDto(row);
    });
    // The app tokens are refused on every instance by the time the operator hears of the suspension.
    await this.standings.forgetDeveloperEverywhere(developerId);
    return suspended;
  }

  async reinstate(developerId: string): Promise<OperatorDeveloperDto> {
    const reinstated = await this.dataSource.transaction(async (manager) => {
      const row = isId(developerId, 'dev') ? await this.developers.reinstate(manager, developerId) : null;
      if (!row) throw await this.whyNot(developerId, 'not suspended');
      await this.mail.enqueue(manager, {
        to: row.email,
        subject: 'Your developer account is reinstated',
        text: `Your developer account (${row.company_name}) is active again; sign in to the console and request new app tokens.`,
      });
      return toDto(row);
    });
    this.standings.forgetDeveloper(developerId);
    return reinstated;
  }

  /** 404 for an unknown account, 409 for one already in the asked-for state (as package suspension answers). */
  private async whyNot(developerId: string, state: string): Promise<ProblemError> {
    const exists = isId(developerId, 'dev') && (await this.developers.exists(developerId));
    return exists
      ? new ProblemError('conflict', `Developer account ${developerId} is ${state}`)
      : new ProblemError('not_found', `No developer account ${developerId}`);
  }
}
