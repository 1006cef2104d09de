import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Developer password reset (issue 24): single-use links valid one hour,
 * stored as the SHA-256 of a 256-bit token. A newer request invalidates the
 * developer's earlier unused links (`invalidated_at`), as verification links do.
 */
export class PasswordResets1764002130000 implements MigrationInterface {
  name = 'PasswordResets1764002130000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE password_resets (
        id             text PRIMARY KEY,
        developer_id   text NOT NULL REFERENCES developers (id) ON DELETE CASCADE,
        token_hash     text NOT NULL UNIQUE,
        created_at     timestamptz NOT NULL DEFAULT now(),
        expires_at     timestamptz NOT NULL,
        used_at        timestamptz,
        invalidated_at timestamptz
      )`);
    await db.query(
      `CREATE INDEX password_resets_open_idx ON password_resets (developer_id) WHERE used_at IS NULL AND invalidated_at IS NULL`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE IF EXISTS password_resets`);
  }
}
