import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook deliveries are sent by one drain per endpoint (issue 16), which
 * claims that endpoint's due deliveries and asks when its next one is due:
 * pending rows by app and due time. It replaces the index of pending rows by
 * due time alone, which served the per-delivery jobs' sweeps (gone).
 */
export class WebhookDrainIndex1764002000000 implements MigrationInterface {
  name = 'WebhookDrainIndex1764002000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (app_id, next_attempt_at) WHERE status = 'pending'`);
    await db.query(`DROP INDEX webhook_deliveries_pending_idx`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`);
    await db.query(`DROP INDEX webhook_deliveries_due_idx`);
  }
}
