import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Idempotency } from '../../common/idempotency/idempotency.service';
import { UsersService } from '../auth/users.service';
import { DomainEvents } from '../events/domain-events';
import { InstallsService } from '../marketplace/installs.service';
import { SEND_SCOPE } from '../messages/messages.service';
import { SessionCache } from '../access/session-cache';
import { EraseAccountResult } from './account-deletion.queue';
import { PersonalDataSections } from './personal-data-sections';
import { AccountDeletionsRepository } from './account-deletions.repository';
import { EXPORT_SCOPE } from './exports.service';

/** Outbox event between areas, recorded in the erasure's transaction; never delivered to providers. */
export const ACCOUNT_ERASED = 'account.erased';

/** Idempotency records of a user (`owner_id` = user id, no foreign key): their stored answers hold message and export data. */
const USER_IDEMPOTENCY_SCOPES = [SEND_SCOPE, EXPORT_SCOPE, 'agents.execute'];

/**
 * Finishes `DELETE /v1/me` in the worker, in one transaction, so nothing is
 * left half-erased: each active install ends through the uninstall path
 * (`install.removed` with reason `account_deleted`, token family revoked),
 * the user's idempotency records go, each personal-data section's
 * `eraseWithAccount` runs (the messages that reached them are sealed), then the user row, and with it, by the
 * schema's cascading foreign keys, everything keyed to the user: sessions,
 * soul, contacts and groups, the messages they sent, exports, agent actions,
 * installs with their execution traces and confirmations, OAuth grants. The
 * tombstone is stamped `erased_at`. A second run (retry, duplicate) finds
 * the tombstone stamped and does nothing.
 */
@Injectable()
export class AccountEraser {
  private readonly logger = new Logger(AccountEraser.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly deletions: AccountDeletionsRepository,
    private readonly installs: InstallsService,
    private readonly users: UsersService,
    private readonly idempotency: Idempotency,
    private readonly events: DomainEvents,
    private readonly checkedSessions: SessionCache,
    private readonly sections: PersonalDataSections,
  ) {}

  async erase(userId: string): Promise<EraseAccountResult> {
    const result = await this.dataSource.transaction(async (manager): Promise<EraseAccountResult> => {
      const deletion = await this.deletions.findForUpdate(manager, userId);
      if (!deletion) return { userId, outcome: 'skipped', reason: 'no deletion was requested for this account' };
      if (deletion.erasedAt) return { userId, outcome: 'skipped', reason: 'already erased' };
      const active = await this.installs.activeFor(manager, userId);
      for (const install of active) await this.installs.remove(manager, install, 'account_deleted');
      for (const scope of USER_IDEMPOTENCY_SCOPES) await this.idempotency.forgetScope(manager, userId, scope);
      // What the cascade leaves: e.g. messages others sent them stay with the senders, sealed from a later account.
      for (const section of this.sections.all()) await section.eraseWithAccount?.(userId, manager);
      await this.users.deleteUser(manager, userId);
      await this.deletions.markErased(manager, userId);
      // Areas holding what has no foreign key to the user (providers' inbound events) erase it on this event.
      await this.events.record(manager, { type: ACCOUNT_ERASED, payload: { user_id: userId } });
      return { userId, outcome: 'erased', installsRemoved: active.length };
    });
    this.checkedSessions.forgetUser(userId);
    if (result.outcome === 'erased') this.logger.log({ userId, installsRemoved: result.installsRemoved }, 'account erased');
    return result;
  }
}
