import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 18: an app's provider tier (Free, Pro, Enterprise: the spec's per-tier
 * limits), and why and when an operator suspended a developer account.
 */
export class AppTiersAndDeveloperSuspension1764001900000 implements MigrationInterface {
  name = 'AppTiersAndDeveloperSuspension1764001900000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE apps ADD COLUMN tier text NOT NULL DEFAULT 'free' CHECK (tier IN ('free', 'pro', 'enterprise'))`);
    await db.query(`ALTER TABLE developers ADD COLUMN suspended_at timestamptz, ADD COLUMN suspension_reason text`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE developers DROP COLUMN suspension_reason, DROP COLUMN suspended_at`);
    await db.query(`ALTER TABLE apps DROP COLUMN tier`);
  }
}
