import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { SessionCache } from '../access/session-cache';
import { UsersService } from '../auth/users.service';
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
    private readonly users: UsersService,
  ) {}

  async create(userId: string): Promise<SoulDto> {
    const soul = await this.dataSource.transaction(async (manager) => {
      // The same lock as the erasure: a creation and a deletion of one user's record never interleave.
      if (!(await this.users.lockForSoulChange(manager, userId))) throw new ApiError('UNAUTHORIZED', 'This user no longer exists');
      if (await this.souls.findByUser(userId, manager)) {
        throw new ApiError('CONFLICT', 'This user already has a soul record; change it with PATCH /v1/soul');
      }
      const created = await this.souls.createInitial(manager, userId);
      await this.users.clearSoulDeleted(manager, userId);
      return created;
    });
    // `/v1/me` shows soul_id from the session check: it must show the new one.
    this.checkedSessions.forgetUser(userId);
    return toSoulDto(soul);
  }
}
