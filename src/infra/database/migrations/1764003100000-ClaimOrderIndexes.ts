import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The two claims of the event backbone read their rows in the order of an
 * index, so a claim reads only the rows it takes:
 * - the webhook drain claims an endpoint's due deliveries by `(next_attempt_at, id)`;
 *   the due index had `(endpoint_id, next_attempt_at)` only, and since a fan-out
 *   gives all its rows one due time, every claim read and sorted the endpoint's
 *   whole backlog;
 * - the event dispatcher claims due events by `(available_at, created_at, id)`
 *   (events.repository.ts, CLAIM_DUE_SQL); `id` joins the pending index for the same reason.
 * Each index keeps its name. The service's migrations run in one transaction,
 * where `CREATE INDEX CONCURRENTLY` cannot: building an index reads the whole
 * table (the predicate limits what it writes, not what it reads) and holds
 * writes to it meanwhile. On a large `events` or `webhook_deliveries` table an
 * operator builds the `…_next` indexes concurrently before the upgrade
 * (docs/operations.md); the migration then only swaps names.
 */
export class ClaimOrderIndexes1764003100000 implements MigrationInterface {
  name = 'ClaimOrderIndexes1764003100000';

  async up(db: QueryRunner): Promise<void> {
    await replaceIndex(
      db,
      'webhook_deliveries_endpoint_due_idx',
      `webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'pending'`,
    );
    await replaceIndex(db, 'events_pending_idx', `events (available_at, created_at, id) WHERE dispatched_at IS NULL`);
  }

  async down(db: QueryRunner): Promise<void> {
    await replaceIndex(
      db,
      'webhook_deliveries_endpoint_due_idx',
      `webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending'`,
    );
    await replaceIndex(db, 'events_pending_idx', `events (available_at, created_at) WHERE dispatched_at IS NULL`);
  }
}

/**
 * Builds the new index beside the old one, unless an operator built it already (an invalid one, left by a failed
 * concurrent build, is dropped and built again), then drops the old one and gives the new one its name.
 */
async function replaceIndex(db: QueryRunner, name: string, definition: string): Promise<void> {
  const [prebuilt] = (await db.query(
    `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`,
    [`${name}_next`],
  )) as Array<{ valid: boolean }>;
  if (prebuilt && !prebuilt.valid) await db.query(`DROP INDEX ${name}_next`);
  if (!prebuilt?.valid) await db.query(`CREATE INDEX ${name}_next ON ${definition}`);
  await db.query(`DROP INDEX ${name}`);
  await db.query(`ALTER INDEX ${name}_next RENAME TO ${name}`);
}
