import { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1764000000000 implements MigrationInterface {
  name = 'Foundation1764000000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE events (
        id            text PRIMARY KEY,
        type          text NOT NULL,
        payload       jsonb NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT now(),
        dispatched_at timestamptz,
        attempts      integer NOT NULL DEFAULT 0,
        last_error    text,
        available_at  timestamptz NOT NULL DEFAULT now()
      )`);
    // The dispatcher only ever scans undispatched rows; keep that scan tiny.
    await db.query(`CREATE INDEX events_pending_idx ON events (available_at, created_at) WHERE dispatched_at IS NULL`);
    await db.query(`CREATE INDEX events_dispatched_at_idx ON events (dispatched_at) WHERE dispatched_at IS NOT NULL`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE events`);
  }
}
