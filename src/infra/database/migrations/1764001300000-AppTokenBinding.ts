import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * App access tokens name the client secret generation that obtained them
 * (`sgen`), so rotating a leaked secret without a grace period ends the
 * tokens it minted (see PlatformAuthGuard).
 */
export class AppTokenBinding1764001300000 implements MigrationInterface {
  name = 'AppTokenBinding1764001300000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE apps ADD COLUMN secret_generation integer NOT NULL DEFAULT 1`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE apps DROP COLUMN secret_generation`);
  }
}
