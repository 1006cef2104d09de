import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 20: the events API and the execution log.
 *
 * `app_events` keeps each app's webhook-able events (the envelope its
 * endpoints receive, byte for byte) for the events API, whether or not the
 * app subscribes to them, for `APP_EVENT_RETENTION_DAYS`. The primary key is
 * the outbox event id: an event concerns one app, and a re-dispatch after a
 * crash writes nothing twice (`ON CONFLICT DO NOTHING`). The list reads newest
 * first within an app, with or without a type filter (the two composite
 * b-trees); the hourly purge finds old rows through `created_at` alone. Not a
 * BRIN index: the purge frees space that new rows reuse, so the table's
 * physical order drifts from time (the same reason as in CapabilityMetrics).
 *
 * `capability_executions` gets `(app_id, created_at DESC, id DESC)` for the
 * execution log, which lists an app's traces newest first; the existing
 * install and package indexes serve those filters. It costs every trace
 * insert one more b-tree entry (the table had a primary key and two indexes).
 */
export class ProviderEventsAndExecutionLog1764002600000 implements MigrationInterface {
  name = 'ProviderEventsAndExecutionLog1764002600000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE app_events (
        id         text PRIMARY KEY,
        app_id     text NOT NULL,
        type       text NOT NULL,
        body       text NOT NULL,
        created_at timestamptz NOT NULL
      )`);
    await db.query(`CREATE INDEX app_events_app_idx ON app_events (app_id, created_at DESC, id DESC)`);
    await db.query(`CREATE INDEX app_events_app_type_idx ON app_events (app_id, type, created_at DESC, id DESC)`);
    await db.query(`CREATE INDEX app_events_created_idx ON app_events (created_at)`);
    await db.query(`CREATE INDEX capability_executions_app_idx ON capability_executions (app_id, created_at DESC, id DESC)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX IF EXISTS capability_executions_app_idx`);
    await db.query(`DROP TABLE IF EXISTS app_events`);
  }
}
