import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The runtime URL belongs to a version, the one that was reviewed: a new
 * draft naming another runtime no longer moves the live traffic of the
 * published version. Every existing version gets its package's current URL
 * (the only one recorded); the package column goes, so there is one place
 * to read it from. Live traffic reads the published version's URL.
 */
export class VersionRuntimeUrl1764001100000 implements MigrationInterface {
  name = 'VersionRuntimeUrl1764001100000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE package_versions ADD COLUMN runtime_url text`);
    await db.query(`UPDATE package_versions v SET runtime_url = p.runtime_url FROM packages p WHERE p.id = v.package_id`);
    await db.query(`ALTER TABLE package_versions ALTER COLUMN runtime_url SET NOT NULL`);
    await db.query(`ALTER TABLE packages DROP COLUMN runtime_url`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE packages ADD COLUMN runtime_url text`);
    // Back to one URL per package: the one live traffic uses (published version), else the newest version's.
    await db.query(
      `UPDATE packages p SET runtime_url = v.runtime_url FROM package_versions v
        WHERE v.id = COALESCE(p.published_version_id, p.latest_version_id)`,
    );
    await db.query(`ALTER TABLE packages ALTER COLUMN runtime_url SET NOT NULL`);
    await db.query(`ALTER TABLE package_versions DROP COLUMN runtime_url`);
  }
}
