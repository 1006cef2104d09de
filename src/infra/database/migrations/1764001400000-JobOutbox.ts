import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The transactional job outbox (issue 16, docs/decisions.md "Event backbone").
 * A service that needs background work inserts a row here in the transaction
 * of the change; the relay moves committed rows to BullMQ (job id = row id)
 * and the row is deleted once its job has completed (a job that failed for
 * good keeps its row, marked failed, and is run again later by the relay's
 * sweep: its failure may have been an outage). A statement trigger wakes
 * the relays on commit (NOTIFY is delivered on commit, dropped on rollback).
 *
 * Work that the removed sweepers used to re-enqueue (pending mail, queued
 * agent actions, pending exports, pending webhook deliveries) is written to
 * the outbox here, so an upgrade loses nothing that was in flight.
 */
export class JobOutbox1764001400000 implements MigrationInterface {
  name = 'JobOutbox1764001400000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE job_outbox (
        id          text PRIMARY KEY,
        queue       text NOT NULL,
        name        text NOT NULL,
        data        jsonb NOT NULL,
        opts        jsonb NOT NULL DEFAULT '{}',
        created_at  timestamptz NOT NULL DEFAULT now(),
        relayed_at  timestamptz,
        checked_at  timestamptz,
        failed_at   timestamptz,
        failures    integer NOT NULL DEFAULT 0,
        last_error  text
      )`);
    await db.query(`CREATE INDEX job_outbox_unrelayed_idx ON job_outbox (created_at) WHERE relayed_at IS NULL`);
    await db.query(`CREATE INDEX job_outbox_relayed_idx ON job_outbox (checked_at) WHERE relayed_at IS NOT NULL`);
    await db.query(`
      CREATE FUNCTION job_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('job_outbox', '');
        RETURN NULL;
      END $$`);
    await db.query(`CREATE TRIGGER job_outbox_notify AFTER INSERT ON job_outbox FOR EACH STATEMENT EXECUTE FUNCTION job_outbox_notify()`);

    // In-flight work moves to the outbox; the mail feeder's events are done with.
    await db.query(`
      INSERT INTO job_outbox (id, queue, name, data, opts)
      SELECT id, 'mail', 'send', jsonb_build_object('mailId', id), '{"attempts": 8, "backoff": {"type": "exponential", "delay": 2000}}'
        FROM mail_outbox WHERE status = 'pending'
      ON CONFLICT DO NOTHING`);
    await db.query(`UPDATE events SET dispatched_at = now() WHERE type = 'mail.queued' AND dispatched_at IS NULL`);
    await db.query(`
      INSERT INTO job_outbox (id, queue, name, data)
      SELECT id, 'agents', 'run-action', jsonb_build_object('actionId', id) FROM agent_actions WHERE status IN ('queued', 'running')
      ON CONFLICT DO NOTHING`);
    await db.query(`
      INSERT INTO job_outbox (id, queue, name, data)
      SELECT id, 'exports', 'build-export', jsonb_build_object('exportId', id) FROM exports WHERE status = 'pending' AND expires_at > now()
      ON CONFLICT DO NOTHING`);
    await db.query(`
      INSERT INTO job_outbox (id, queue, name, data, opts)
      SELECT id, 'webhook-delivery', 'deliver', jsonb_build_object('deliveryId', id), '{"attempts": 5, "backoff": {"type": "fixed", "delay": 500}}'
        FROM webhook_deliveries WHERE status = 'pending'
      ON CONFLICT DO NOTHING`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE job_outbox`);
    await db.query(`DROP FUNCTION job_outbox_notify()`);
  }
}
