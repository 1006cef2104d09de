import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * RFC 6238 §5.2: a TOTP code is accepted once. Each developer keeps the last
 * time step (Unix time / 30 s) whose code was accepted, at login or at MFA
 * confirmation; a code of that step or an earlier one is refused. It is set
 * with a conditional UPDATE, so of concurrent requests with one code only one wins.
 */
export class DeveloperLoginHardening1764001000000 implements MigrationInterface {
  name = 'DeveloperLoginHardening1764001000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE developers ADD COLUMN mfa_last_step bigint`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE developers DROP COLUMN mfa_last_step`);
  }
}
