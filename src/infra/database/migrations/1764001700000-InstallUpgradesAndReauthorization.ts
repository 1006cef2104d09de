import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Installs follow published versions (issue 18): a published version that
 * needs the user's consent again waits on the install as `pending_version_id`;
 * an install whose runtime refused a freshly issued token twice is marked
 * `reauthorization_required_at` until the user re-authorizes. Pending
 * confirmations are listed per user (the partial index keeps that read small).
 */
export class InstallUpgradesAndReauthorization1764001700000 implements MigrationInterface {
  name = 'InstallUpgradesAndReauthorization1764001700000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE installs ADD COLUMN pending_version_id text REFERENCES package_versions (id)`);
    await db.query(`ALTER TABLE installs ADD COLUMN reauthorization_required_at timestamptz`);
    await db.query(
      `CREATE INDEX action_confirmations_pending_idx ON action_confirmations (user_id, created_at, id) WHERE status = 'pending'`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX action_confirmations_pending_idx`);
    await db.query(`ALTER TABLE installs DROP COLUMN reauthorization_required_at`);
    await db.query(`ALTER TABLE installs DROP COLUMN pending_version_id`);
  }
}
