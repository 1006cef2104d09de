import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { Idempotency } from '../../common/idempotency/idempotency.service';
import { SessionCache } from '../access/session-cache';
import { UsersService } from '../auth/users.service';
import { DomainEvents } from '../events/domain-events';
import { SoulService } from '../soul/soul.service';
import { DeletionResultDto } from './dto/privacy.dto';
import { ExportsRepository } from './exports.repository';
import { EXPORT_SCOPE } from './exports.service';
import { PersonalDataSections } from './personal-data-sections';

export const SOUL_DELETED_MESSAGE = 'Your soul record and everything derived from it were permanently deleted.';

/** `DELETE /v1/soul`: the permanent erasure of the soul record and what was derived from it. */
@Injectable()
export class SoulEraser {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly souls: SoulService,
    private readonly sections: PersonalDataSections,
    private readonly events: DomainEvents,
    private readonly checkedSessions: SessionCache,
    private readonly exports: ExportsRepository,
    private readonly users: UsersService,
    private readonly idempotency: Idempotency,
  ) {}

  /**
   * One transaction: it all goes, or nothing does. The user row is locked
   * first, which orders this against a concurrent login (which upserts that
   * row) and a concurrent export request (whose insert must take a key-share
   * lock on it), so no export made from the old soul survives the deletion.
   */
  async erase(userId: string): Promise<DeletionResultDto> {
    await this.dataSource.transaction(async (manager) => {
      const lockedAt = await this.users.lockForSoulChange(manager, userId);
      if (!lockedAt) throw new ApiError('UNAUTHORIZED', 'This user no longer exists');
      if (!(await this.souls.deleteWithin(manager, userId))) {
        throw new ApiError('NOT_FOUND', 'This user has no soul record (it was already deleted)');
      }
      const erased: Record<string, number> = { soul: 1 };
      // Exports contain the soul record, so they go with it.
      erased.exports = await this.exports.deleteForUser(manager, userId);
      // A repeated export request would otherwise replay the answer naming an export deleted here (404 on download).
      await this.idempotency.forgetScope(manager, userId, EXPORT_SCOPE);
      for (const source of this.sections.all()) {
        if (source.eraseWithSoul) erased[source.section] = await source.eraseWithSoul(userId, manager);
      }
      await this.users.markSoulDeleted(manager, userId, lockedAt);
      await this.events.record(manager, {
        type: 'soul.deleted',
        payload: { user_id: userId, deleted_at: lockedAt.toISOString(), erased },
      });
    });
    // `/v1/me` shows soul_id from the session check: it must not show the deleted one.
    await this.checkedSessions.forgetUserEverywhere(userId);
    return { deleted: true, message: SOUL_DELETED_MESSAGE };
  }
}
