import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Several webhook endpoints per app (issue 20, Svix's endpoints). Every
 * endpoint is a `webhook_endpoints` row; the spec's single profile is the
 * app's row flagged `is_primary` (at most one per app), whose URL stays in
 * `apps.webhook_url` (one source of truth, as before), so its `url` is null.
 * Existing profiles move over as primary rows with their secrets, state and
 * timestamps; `webhook_profiles` is dropped.
 *
 * A delivery names its endpoint: fan-out writes one row per subscribed
 * endpoint, so the idempotent key becomes (event, endpoint), and the drain's
 * due index, the log index and the package filter's index lead with the
 * endpoint instead of the app. Existing deliveries belong to their app's
 * primary endpoint (the only one there was).
 */
export class WebhookEndpoints1764002500000 implements MigrationInterface {
  name = 'WebhookEndpoints1764002500000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE webhook_endpoints (
        id                         text PRIMARY KEY,
        app_id                     text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
        is_primary                 boolean NOT NULL DEFAULT false,
        url                        text,
        description                text NOT NULL DEFAULT '',
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
        last_ping                  jsonb,
        created_at                 timestamptz NOT NULL DEFAULT now(),
        updated_at                 timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT webhook_endpoints_url_ck CHECK (is_primary OR url IS NOT NULL)
      )`);
    await db.query(`CREATE UNIQUE INDEX webhook_endpoints_primary_uq ON webhook_endpoints (app_id) WHERE is_primary`);
    await db.query(`CREATE INDEX webhook_endpoints_app_idx ON webhook_endpoints (app_id, created_at, id)`);

    // Ids in the service's shape (`whe_` + 22 letters or digits) from the CSPRNG behind gen_random_uuid.
    await db.query(`
      INSERT INTO webhook_endpoints (id, app_id, is_primary, event_types, secret_encrypted, previous_secret_encrypted,
                                     previous_secret_expires_at, secret_rotated_at, rotation_reminded_at, timeout_ms,
                                     failing_since, disabled_at, disabled_reason, created_at, updated_at)
      SELECT 'whe_' || substr(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 1, 22), app_id, true,
             event_types, secret_encrypted, previous_secret_encrypted, previous_secret_expires_at, secret_rotated_at,
             rotation_reminded_at, timeout_ms, failing_since, disabled_at, disabled_reason, created_at, updated_at
        FROM webhook_profiles`);

    await db.query(`ALTER TABLE webhook_deliveries ADD COLUMN endpoint_id text REFERENCES webhook_endpoints (id) ON DELETE CASCADE`);
    await db.query(`
      UPDATE webhook_deliveries d SET endpoint_id = e.id
        FROM webhook_endpoints e WHERE e.app_id = d.app_id AND e.is_primary`);
    await db.query(`ALTER TABLE webhook_deliveries ALTER COLUMN endpoint_id SET NOT NULL`);

    await db.query(`DROP INDEX webhook_deliveries_event_app_uq`);
    await db.query(
      `CREATE UNIQUE INDEX webhook_deliveries_event_endpoint_uq ON webhook_deliveries (event_id, endpoint_id) WHERE replay_of IS NULL AND NOT test`,
    );
    await db.query(`DROP INDEX webhook_deliveries_due_idx`);
    await db.query(
      `CREATE INDEX webhook_deliveries_endpoint_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending'`,
    );
    await db.query(`DROP INDEX webhook_deliveries_log_idx`);
    await db.query(`CREATE INDEX webhook_deliveries_endpoint_log_idx ON webhook_deliveries (endpoint_id, created_at DESC, id DESC)`);
    await db.query(`DROP INDEX webhook_deliveries_package_idx`);
    await db.query(
      `CREATE INDEX webhook_deliveries_endpoint_package_idx ON webhook_deliveries (endpoint_id, package_id, created_at DESC, id DESC)
        WHERE package_id IS NOT NULL`,
    );

    await db.query(`DROP TABLE webhook_profiles`);
  }

  /** Back to one profile per app: the primary rows return; other endpoints and their deliveries go. */
  async down(db: QueryRunner): Promise<void> {
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
      INSERT INTO webhook_profiles (app_id, event_types, secret_encrypted, previous_secret_encrypted, previous_secret_expires_at,
                                    secret_rotated_at, rotation_reminded_at, timeout_ms, failing_since, disabled_at, disabled_reason,
                                    created_at, updated_at)
      SELECT app_id, event_types, secret_encrypted, previous_secret_encrypted, previous_secret_expires_at, secret_rotated_at,
             rotation_reminded_at, timeout_ms, failing_since, disabled_at, disabled_reason, created_at, updated_at
        FROM webhook_endpoints WHERE is_primary`);
    await db.query(`DELETE FROM webhook_deliveries d USING webhook_endpoints e WHERE e.id = d.endpoint_id AND NOT e.is_primary`);
    await db.query(`DROP INDEX webhook_deliveries_endpoint_package_idx`);
    await db.query(`DROP INDEX webhook_deliveries_endpoint_log_idx`);
    await db.query(`DROP INDEX webhook_deliveries_endpoint_due_idx`);
    await db.query(`DROP INDEX webhook_deliveries_event_endpoint_uq`);
    await db.query(`ALTER TABLE webhook_deliveries DROP COLUMN endpoint_id`);
    await db.query(
      `CREATE INDEX webhook_deliveries_package_idx ON webhook_deliveries (app_id, package_id, created_at DESC, id DESC) WHERE package_id IS NOT NULL`,
    );
    await db.query(`CREATE INDEX webhook_deliveries_log_idx ON webhook_deliveries (app_id, created_at DESC, id DESC)`);
    await db.query(`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (app_id, next_attempt_at) WHERE status = 'pending'`);
    await db.query(
      `CREATE UNIQUE INDEX webhook_deliveries_event_app_uq ON webhook_deliveries (event_id, app_id) WHERE replay_of IS NULL AND NOT test`,
    );
    await db.query(`DROP TABLE webhook_endpoints`);
  }
}
