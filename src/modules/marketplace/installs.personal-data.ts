import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { PersonalDataSection, PersonalDataSource } from '../privacy/personal-data';

/** Installs in the user's export (kept when the soul is deleted: they are the user's choices, not derived from the soul). */
@Injectable()
@PersonalDataSection()
export class InstallsPersonalData implements PersonalDataSource {
  readonly section = 'installs';

  async exportFor(userId: string, manager: EntityManager): Promise<unknown> {
    const rows: Array<{
      id: string;
      package_id: string;
      slug: string;
      version: string;
      scopes: string[];
      status: string;
      removed_reason: string | null;
      created_at: Date;
      removed_at: Date | null;
    }> = await manager.query(
      `SELECT i.id, i.package_id, p.slug, v.version, i.scopes, i.status, i.removed_reason, i.created_at, i.removed_at
           FROM installs i JOIN packages p ON p.id = i.package_id JOIN package_versions v ON v.id = i.version_id
          WHERE i.user_id = $1 ORDER BY i.created_at, i.id`,
      [userId],
    );
    return rows.map((r) => ({ ...r, created_at: r.created_at.toISOString(), removed_at: r.removed_at?.toISOString() ?? null }));
  }
}
