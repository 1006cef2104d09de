import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Runtime bridge: one execution trace per capability call (`req_` id, phase
 * timings, attempts, outcome) and the pending confirmations that gate every
 * `action` capability. Cached state lives in Redis, not here: it is
 * disposable and read on every surface render.
 */
export class RuntimeBridge1764000800000 implements MigrationInterface {
  name = 'RuntimeBridge1764000800000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE capability_executions (
        id                text PRIMARY KEY,
        install_id        text NOT NULL REFERENCES installs (id) ON DELETE CASCADE,
        user_id           text NOT NULL,
        app_id            text NOT NULL,
        package_id        text NOT NULL,
        capability        text NOT NULL,
        mode              text NOT NULL,
        trigger           text NOT NULL CHECK (trigger IN ('api', 'confirmation', 'poll', 'stream')),
        outcome           text NOT NULL CHECK (outcome IN ('ok', 'degraded', 'cached', 'pending', 'failed')),
        error_code        text,
        error_message     text,
        attempts          integer NOT NULL DEFAULT 0,
        retries_exhausted boolean NOT NULL DEFAULT false,
        phases            jsonb NOT NULL,
        duration_ms       integer NOT NULL,
        created_at        timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX capability_executions_install_idx ON capability_executions (install_id, created_at DESC)`);
    await db.query(`CREATE INDEX capability_executions_package_idx ON capability_executions (package_id, created_at DESC)`);

    await db.query(`
      CREATE TABLE action_confirmations (
        id                text PRIMARY KEY,
        install_id        text NOT NULL REFERENCES installs (id) ON DELETE CASCADE,
        user_id           text NOT NULL,
        app_id            text NOT NULL,
        package_id        text NOT NULL,
        capability        text NOT NULL,
        input             jsonb NOT NULL,
        input_hash        text NOT NULL,
        idempotency_key   text NOT NULL,
        request_id        text NOT NULL,
        status            text NOT NULL DEFAULT 'pending'
                          CHECK (status IN ('pending', 'executing', 'completed', 'failed', 'cancelled', 'expired')),
        result            jsonb,
        message           text,
        error             jsonb,
        created_at        timestamptz NOT NULL DEFAULT now(),
        expires_at        timestamptz NOT NULL,
        decided_at        timestamptz,
        UNIQUE (install_id, idempotency_key)
      )`);
    await db.query(`CREATE INDEX action_confirmations_user_idx ON action_confirmations (user_id, created_at DESC)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE IF EXISTS action_confirmations`);
    await db.query(`DROP TABLE IF EXISTS capability_executions`);
  }
}
