import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { SessionCache } from '../auth/session-cache';
import { SoulDto } from '../soul/dto/soul.dto';
import { SoulService, toSoulDto } from '../soul/soul.service';

/**
 * `POST /v1/soul`: a new soul record after the user deleted theirs. It starts
 * from the initial traits, like a new user's; nothing of the deleted record
 * comes back (there is nothing left to bring back).
 */
@Injectable()
export class SoulRenewal {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly souls: SoulService,
    private readonly checkedSessions: SessionCache,
  ) {}

  async create(userId: string): Promise<SoulDto> {
    const soul = await this.dataSource.transaction(async (manager) => {
      // The same lock as the erasure: a creation and a deletion of one user's record never interleave.
      const [locked]: unknown[] = await manager.query(`SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, [userId]);
      if (!locked) throw new ApiError('UNAUTHORIZED', 'This user no longer exists');
      if (await this.souls.findByUser(userId, manager)) {
        throw new ApiError('CONFLICT', 'This user already has a soul record; change it with PATCH /v1/soul');
      }
      const created = await this.souls.createInitial(manager, userId);
      // The users table belongs to auth; the deletion marker is privacy's (SoulEraser sets it).
      await manager.query(`UPDATE users SET soul_deleted_at = NULL WHERE id = $1`, [userId]);
      return created;
    });
    // `/v1/me` shows soul_id from the session check: it must show the new one.
    this.checkedSessions.forgetUser(userId);
    return toSoulDto(soul);
  }
}
