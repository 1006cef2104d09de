import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import { Histogram, LATENCY_BUCKET_BOUNDS } from './capability-metrics.histogram';

/** The two rollup levels: minutes serve the 1-hour window, hours the 24-hour and 7-day ones. */
export type RollupLevel = 'minute' | 'hour';
const TABLES: Record<RollupLevel, string> = { minute: 'capability_metrics_minute', hour: 'capability_metrics_hour' };

/** One rollup row: a capability's calls in one bucket. */
export interface RollupRow {
  capability: string;
  bucket_start: string;
  calls: number;
  errors: number;
  cached: number;
  error_codes: Record<string, number>;
  latency: Histogram;
}

/** What the rollup needs to know about its own schedule. */
export interface RollupWindow {
  /** Late commits: a trace is counted if it commits at most this long after its `created_at`. */
  marginSeconds: number;
  /** How far back a first run (or a run after a long pause) reaches. */
  lookbackSeconds: number;
  /** How long minute and hour rows are kept. */
  keepMinutesSeconds: number;
  keepHoursSeconds: number;
}

/**
 * The only reader and writer of the capability metrics rollups (`capability_metrics_minute`, `…_hour` and the
 * watermark `capability_metrics_rollup`); it reads `capability_executions`, the traces of its own area.
 */
@Injectable()
export class CapabilityMetricsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /**
   * Recomputes every minute from the watermark less the margin up to now, then the hours those minutes fall in,
   * then moves the watermark to the transaction's start and drops rows past their keep. A recomputed bucket is
   * replaced, not added to, so a second run over the same traces changes nothing, and a trace committed late
   * (within the margin) is counted by the next run. The watermark row is held for the whole transaction: runs
   * never overlap. Returns the first minute recomputed and how many minute rows were written.
   */
  async rollup(window: RollupWindow): Promise<{ from: Date; minutes: number }> {
    return this.dataSource.transaction(async (tx) => {
      // The planner prices jsonb_each_text at 100 rows a call, so the hour statement looks costly enough for JIT,
      // whose compilation (about a second) is a hundred times the statement's own work.
      await this.execute(`SET LOCAL jit = off`, [], tx);
      const [{ from }] = await this.rows<{ from: Date }>(
        `SELECT date_trunc('minute', greatest(coalesce(rolled_up_to, '-infinity'), now() - make_interval(secs => $2))
                                     - make_interval(secs => $1)) AS "from"
           FROM capability_metrics_rollup FOR UPDATE`,
        [window.marginSeconds, window.lookbackSeconds],
        tx,
      );
      await this.execute(`DELETE FROM capability_metrics_minute WHERE bucket_start >= $1`, [from], tx);
      const [{ minutes }] = await this.rows<{ minutes: number }>(
        `${aggregate(
          `SELECT package_id, capability, date_trunc('minute', created_at) AS bucket_start, outcome, error_code,
                  width_bucket(duration_ms, $2::float8[]) AS latency_bucket
             FROM capability_executions
            WHERE created_at >= $1 AND outcome IN ('ok', 'degraded', 'failed', 'cached')`,
        )},
         written AS (INSERT INTO capability_metrics_minute (package_id, capability, bucket_start, calls, errors, cached, error_codes, latency)
                     SELECT * FROM rollup RETURNING 1)
         SELECT count(*)::integer AS minutes FROM written`,
        [from, LATENCY_BUCKET_BOUNDS],
        tx,
      );
      await this.rollUpHours(tx, from);
      await this.execute(`UPDATE capability_metrics_rollup SET rolled_up_to = now()`, [], tx);
      await this.execute(
        `DELETE FROM capability_metrics_minute WHERE bucket_start < now() - make_interval(secs => $1)`,
        [window.keepMinutesSeconds],
        tx,
      );
      await this.execute(
        `DELETE FROM capability_metrics_hour WHERE bucket_start < now() - make_interval(secs => $1)`,
        [window.keepHoursSeconds],
        tx,
      );
      return { from, minutes };
    });
  }

  /** The rows of one package at one level from `from` on (optionally one capability), and the rollup's watermark. */
  async read(
    level: RollupLevel,
    packageId: string,
    from: Date,
    capability: string | undefined,
  ): Promise<{ rows: RollupRow[]; rolledUpTo: string | null }> {
    const [result] = await this.rows<{ rows: RollupRow[]; rolled_up_to: Date | null }>(
      `SELECT (SELECT rolled_up_to FROM capability_metrics_rollup) AS rolled_up_to,
              coalesce((SELECT json_agg(r ORDER BY r.bucket_start)
                          FROM (SELECT capability, bucket_start, calls, errors, cached, error_codes, latency
                                  FROM ${TABLES[level]}
                                 WHERE package_id = $1 AND bucket_start >= $2 AND ($3::text IS NULL OR capability = $3)) r),
                       '[]') AS rows`,
      [packageId, from, capability ?? null],
    );
    return { rows: result.rows, rolledUpTo: result.rolled_up_to?.toISOString() ?? null };
  }

  /** Hours are sums of their minutes: every hour from the one `from` falls in is recomputed. */
  private async rollUpHours(tx: Tx, from: Date): Promise<void> {
    await this.execute(`DELETE FROM capability_metrics_hour WHERE bucket_start >= date_trunc('hour', $1::timestamptz)`, [from], tx);
    await this.execute(
      `WITH minutes AS (
         SELECT package_id, capability, date_trunc('hour', bucket_start) AS bucket_start, calls, errors, cached, error_codes, latency
           FROM capability_metrics_minute WHERE bucket_start >= date_trunc('hour', $1::timestamptz)
       ),
       totals AS (
         SELECT package_id, capability, bucket_start, sum(calls) AS calls, sum(errors) AS errors, sum(cached) AS cached
           FROM minutes GROUP BY 1, 2, 3
       ),
       codes AS (
         SELECT package_id, capability, bucket_start, jsonb_object_agg(key, n) AS error_codes
           FROM (SELECT package_id, capability, bucket_start, e.key, sum(e.value::integer) AS n
                   FROM minutes, jsonb_each_text(error_codes) e GROUP BY 1, 2, 3, 4) c
          GROUP BY 1, 2, 3
       ),
       latency AS (
         SELECT package_id, capability, bucket_start, jsonb_object_agg(key, n) AS latency
           FROM (SELECT package_id, capability, bucket_start, h.key, sum(h.value::integer) AS n
                   FROM minutes, jsonb_each_text(latency) h GROUP BY 1, 2, 3, 4) l
          GROUP BY 1, 2, 3
       )
       INSERT INTO capability_metrics_hour (package_id, capability, bucket_start, calls, errors, cached, error_codes, latency)
       SELECT t.package_id, t.capability, t.bucket_start, t.calls, t.errors, t.cached,
              coalesce(c.error_codes, '{}'), coalesce(l.latency, '{}')
         FROM totals t
         LEFT JOIN codes c USING (package_id, capability, bucket_start)
         LEFT JOIN latency l USING (package_id, capability, bucket_start)`,
      [from],
      tx,
    );
  }
}

/**
 * The CTEs that turn traces (`source`: package_id, capability, bucket_start, outcome, error_code,
 * latency_bucket) into rollup rows. Calls are the executions that reached the runtime (ok, degraded, failed);
 * cache hits are counted apart and kept out of the latency histogram, which measures the runtime. A failure
 * without an error code is counted under `unknown`. The last CTE, `rollup`, has the rollup tables' columns in order.
 */
function aggregate(source: string): string {
  return `
    WITH traces AS MATERIALIZED (${source}),
    totals AS (
      SELECT package_id, capability, bucket_start,
             count(*) FILTER (WHERE outcome <> 'cached') AS calls,
             count(*) FILTER (WHERE outcome = 'failed') AS errors,
             count(*) FILTER (WHERE outcome = 'cached') AS cached
        FROM traces GROUP BY 1, 2, 3
    ),
    codes AS (
      SELECT package_id, capability, bucket_start, jsonb_object_agg(code, n) AS error_codes
        FROM (SELECT package_id, capability, bucket_start, coalesce(error_code, 'unknown') AS code, count(*) AS n
                FROM traces WHERE outcome = 'failed' GROUP BY 1, 2, 3, 4) c
       GROUP BY 1, 2, 3
    ),
    latency AS (
      SELECT package_id, capability, bucket_start, jsonb_object_agg(latency_bucket, n) AS latency
        FROM (SELECT package_id, capability, bucket_start, latency_bucket, count(*) AS n
                FROM traces WHERE outcome <> 'cached' GROUP BY 1, 2, 3, 4) l
       GROUP BY 1, 2, 3
    ),
    rollup AS (
      SELECT t.package_id, t.capability, t.bucket_start, t.calls, t.errors, t.cached,
             coalesce(c.error_codes, '{}') AS error_codes, coalesce(l.latency, '{}') AS latency
        FROM totals t
        LEFT JOIN codes c USING (package_id, capability, bucket_start)
        LEFT JOIN latency l USING (package_id, capability, bucket_start)
    )`;
}
