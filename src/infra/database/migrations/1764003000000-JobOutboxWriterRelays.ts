import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Jobs their writer relays itself (issue 16, docs/decisions.md "A lone
 * event's shorter way"). The event dispatcher writes the webhook drain jobs of
 * a fan-out already marked relayed and adds them to BullMQ right after its own
 * commit, so they must not wake every relay as well: the NOTIFY trigger
 * becomes a row trigger that fires only for rows written unrelayed, the ones
 * left to the relays. PostgreSQL folds identical notifications of one
 * transaction into one, so a many-row insert still wakes the relays once.
 */
export class JobOutboxWriterRelays1764003000000 implements MigrationInterface {
  name = 'JobOutboxWriterRelays1764003000000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER job_outbox_notify ON job_outbox`);
    await db.query(
      `CREATE TRIGGER job_outbox_notify AFTER INSERT ON job_outbox
         FOR EACH ROW WHEN (NEW.relayed_at IS NULL) EXECUTE FUNCTION job_outbox_notify()`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER job_outbox_notify ON job_outbox`);
    await db.query(`CREATE TRIGGER job_outbox_notify AFTER INSERT ON job_outbox FOR EACH STATEMENT EXECUTE FUNCTION job_outbox_notify()`);
  }
}
