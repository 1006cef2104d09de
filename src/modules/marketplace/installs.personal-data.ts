import { Injectable } from '@nestjs/common';
import type { Tx } from '../../infra/database/sql-repository';
import { PersonalDataSection, PersonalDataSource } from '../../common/personal-data';
import { InstallsRepository } from './installs.repository';

/** Installs in the user's export (kept when the soul is deleted: they are the user's choices, not derived from the soul). */
@Injectable()
@PersonalDataSection()
export class InstallsPersonalData implements PersonalDataSource {
  readonly section = 'installs';

  constructor(private readonly installs: InstallsRepository) {}

  async exportFor(userId: string, manager: Tx): Promise<unknown> {
    const rows = await this.installs.exportFor(userId, manager);
    return rows.map((r) => ({ ...r, created_at: r.created_at.toISOString(), removed_at: r.removed_at?.toISOString() ?? null }));
  }
}
