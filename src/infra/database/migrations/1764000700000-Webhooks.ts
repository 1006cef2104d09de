import { MigrationInterface, QueryRunner } from 'typeorm';

/** Webhook profiles, outbound deliveries with every attempt, and inbound provider events. */
export class Webhooks1764000700000 implements MigrationInterface {
  name = 'Webhooks1764000700000';

  async up(db: QueryRunner): Promise<void> {
    // The target URL stays in apps.webhook_url (one source of truth); the profile holds the rest.
    await db.query(`
      CREATE TABLE webhook_profiles (
        app_id                     text PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
        event_types                text[] NOT NULL DEFAULT '{*}',
        secret_encrypted           text NOT NULL,
        previous_secret_encrypted  text,
        previous_secret_expires_at timestamptz,
        secret_rotated_at          timestamptz NOT NULL DEFAULT now(),
        rotation_reminded_at       timestamptz,
        timeout_ms                 integer NOT NULL DEFAULT 5000 CHECK (timeout_ms BETWEEN 1000 AND 30000),
        failing_since              timestamptz,
        disabled_at                timestamptz,
        disabled_reason            text,
        created_at                 timestamptz NOT NULL DEFAULT now(),
        updated_at                 timestamptz NOT NULL DEFAULT now()
      )`);

    await db.query(`
      CREATE TABLE webhook_deliveries (
        id               text PRIMARY KEY,
        app_id           text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
        event_id         text NOT NULL,
        event_type       text NOT NULL,
        idempotency_key  text NOT NULL,
        body             text NOT NULL,
        status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
        attempt_count    integer NOT NULL DEFAULT 0,
        chain_started_at timestamptz NOT NULL DEFAULT now(),
        next_attempt_at  timestamptz NOT NULL DEFAULT now(),
        last_status_code integer,
        last_error       text,
        replay_of        text REFERENCES webhook_deliveries (id) ON DELETE SET NULL,
        test             boolean NOT NULL DEFAULT false,
        delivered_at     timestamptz,
        failed_at        timestamptz,
        created_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now()
      )`);
    // Fan-out is idempotent: one original delivery per event and app, however often the subscriber runs.
    await db.query(
      `CREATE UNIQUE INDEX webhook_deliveries_event_app_uq ON webhook_deliveries (event_id, app_id) WHERE replay_of IS NULL AND NOT test`,
    );
    await db.query(`CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (app_id, created_at DESC, id DESC)`);
    await db.query(`CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`);

    await db.query(`
      CREATE TABLE webhook_attempts (
        delivery_id      text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
        attempt          integer NOT NULL,
        started_at       timestamptz NOT NULL,
        request_headers  jsonb NOT NULL,
        status_code      integer,
        latency_ms       integer NOT NULL,
        response_body    text,
        error_class      text,
        outcome          text NOT NULL CHECK (outcome IN ('delivered', 'retry', 'failed')),
        PRIMARY KEY (delivery_id, attempt)
      )`);

    await db.query(`
      CREATE TABLE inbound_webhook_events (
        id           text PRIMARY KEY,
        app_id       text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
        event_type   text NOT NULL,
        action       text NOT NULL,
        user_id      text NOT NULL,
        occurred_at  timestamptz NOT NULL,
        body_sha256  text NOT NULL,
        data         jsonb NOT NULL,
        received_at  timestamptz NOT NULL DEFAULT now(),
        UNIQUE (app_id, event_type, occurred_at, body_sha256)
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE inbound_webhook_events`);
    await db.query(`DROP TABLE webhook_attempts`);
    await db.query(`DROP TABLE webhook_deliveries`);
    await db.query(`DROP TABLE webhook_profiles`);
  }
}
