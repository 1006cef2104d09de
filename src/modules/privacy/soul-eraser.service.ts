import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { SessionCache } from '../auth/session-cache';
import { DomainEvents } from '../events/domain-events';
import { SoulService } from '../soul/soul.service';
import { DeletionResultDto } from './dto/privacy.dto';
import { ExportEntity } from './entities/export.entity';
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
  ) {}

  /**
   * One transaction: it all goes, or nothing does. The user row is locked
   * first, which orders this against a concurrent login (which upserts that
   * row) and a concurrent export request (whose insert must take a key-share
   * lock on it), so no export made from the old soul survives the deletion.
   */
  async erase(userId: string): Promise<DeletionResultDto> {
    await this.dataSource.transaction(async (manager) => {
      // The users table belongs to auth; the lock and the marker below are the only writes privacy makes to it.
      const [locked]: Array<{ now: Date }> = await manager.query(`SELECT now() AS now FROM users WHERE id = $1 FOR UPDATE`, [userId]);
      if (!locked) throw new ApiError('UNAUTHORIZED', 'This user no longer exists');
      if (!(await this.souls.deleteWithin(manager, userId))) {
        throw new ApiError('NOT_FOUND', 'This user has no soul record (it was already deleted)');
      }
      const erased: Record<string, number> = { soul: 1 };
      // Exports contain the soul record, so they go with it.
      erased.exports = (await manager.delete(ExportEntity, { userId })).affected ?? 0;
      // A repeated export request would otherwise replay the answer naming an export deleted here (404 on download).
      await manager.query(`DELETE FROM idempotency_keys WHERE owner_id = $1 AND scope = $2`, [userId, EXPORT_SCOPE]);
      for (const source of this.sections.all()) {
        if (source.eraseWithSoul) erased[source.section] = await source.eraseWithSoul(userId, manager);
      }
      await manager.query(`UPDATE users SET soul_deleted_at = $2 WHERE id = $1`, [userId, locked.now]);
      await this.events.record(manager, {
        type: 'soul.deleted',
        payload: { user_id: userId, deleted_at: locked.now.toISOString(), erased },
      });
    });
    // `/v1/me` shows soul_id from the session check: it must not show the deleted one.
    this.checkedSessions.forgetUser(userId);
    return { deleted: true, message: SOUL_DELETED_MESSAGE };
  }
}
