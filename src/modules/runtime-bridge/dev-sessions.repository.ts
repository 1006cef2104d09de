import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository } from '../../infra/database/sql-repository';

@Injectable()
export class DevSessionsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /**
   * The developer's own user account: the one whose verified email is the developer's verified email. Both
   * sides proved the address, so no one can make another person's installs route to their machine.
   */
  async ownUserOf(developerId: string): Promise<string | null> {
    const row = await this.first<{ id: string }>(
      `SELECT u.id FROM developers d
         JOIN users u ON u.verified_email = lower(d.email)
        WHERE d.id = $1 AND d.email_verified_at IS NOT NULL`,
      [developerId],
    );
    return row?.id ?? null;
  }
}
