import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The package a webhook delivery concerns (issue 24, the delivery log's
 * package column): written at fan-out from the event's payload (install.*,
 * package.*, and capability.* through the install's package), null for an
 * event about no package and for test events. No foreign key: the log is a
 * record of what was sent, and the fan-out's insert stays one statement
 * without a lookup per row. The index serves the log's `package_id` filter
 * (newest first within an app), partial so deliveries about no package cost
 * nothing.
 */
export class DeliveryPackage1764002240000 implements MigrationInterface {
  name = 'DeliveryPackage1764002240000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE webhook_deliveries ADD COLUMN package_id text`);
    await db.query(
      `CREATE INDEX webhook_deliveries_package_idx ON webhook_deliveries (app_id, package_id, created_at DESC, id DESC)
        WHERE package_id IS NOT NULL`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX webhook_deliveries_package_idx`);
    await db.query(`ALTER TABLE webhook_deliveries DROP COLUMN package_id`);
  }
}
