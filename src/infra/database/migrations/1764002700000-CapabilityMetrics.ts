import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 20: metrics per capability, read from rollups of the execution traces
 * instead of the traces themselves (docs/metrics.md).
 *
 * `capability_metrics_minute` and `capability_metrics_hour` hold, per package,
 * capability and bucket: calls that reached the runtime, failures, cache
 * hits, failures by error code, and a latency histogram with fixed log-scale
 * buckets (sparse jsonb, bucket index → count), so percentiles over any
 * buckets come from summed counts. The 1-hour window reads at most 60 minute
 * rows per capability, the 24-hour and 7-day windows at most 24 and 168 hour
 * rows. The primary key serves those reads (one package, a time range); the
 * `bucket_start` indexes serve the rollup's purge of old rows.
 *
 * A worker job recomputes the rollups from the traces created since its
 * watermark (less a margin for late commits), in one transaction that holds
 * the watermark row, so a run twice counts once. It reads the new traces
 * through `capability_executions_created_idx`, which costs every trace
 * insert one b-tree entry at the index's right edge (a BRIN index would cost
 * nothing, but the trace purge leaves free space that new traces reuse, so
 * the table's physical order drifts away from time and a BRIN range would
 * soon cover weeks).
 */
export class CapabilityMetrics1764002700000 implements MigrationInterface {
  name = 'CapabilityMetrics1764002700000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE INDEX capability_executions_created_idx ON capability_executions (created_at)`);
    for (const table of ['capability_metrics_minute', 'capability_metrics_hour']) {
      await db.query(`
        CREATE TABLE ${table} (
          package_id   text NOT NULL,
          capability   text NOT NULL,
          bucket_start timestamptz NOT NULL,
          calls        integer NOT NULL,
          errors       integer NOT NULL,
          cached       integer NOT NULL,
          error_codes  jsonb NOT NULL,
          latency      jsonb NOT NULL,
          PRIMARY KEY (package_id, bucket_start, capability)
        )`);
      await db.query(`CREATE INDEX ${table}_bucket_idx ON ${table} (bucket_start)`);
    }
    await db.query(`
      CREATE TABLE capability_metrics_rollup (
        singleton    boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        rolled_up_to timestamptz
      )`);
    await db.query(`INSERT INTO capability_metrics_rollup DEFAULT VALUES`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TABLE IF EXISTS capability_metrics_rollup`);
    await db.query(`DROP TABLE IF EXISTS capability_metrics_hour`);
    await db.query(`DROP TABLE IF EXISTS capability_metrics_minute`);
    await db.query(`DROP INDEX IF EXISTS capability_executions_created_idx`);
  }
}
