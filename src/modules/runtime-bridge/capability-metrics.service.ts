import { Injectable } from '@nestjs/common';
import { DEFAULT_METRIC_WINDOW, MetricWindow, windowBuckets } from '../../common/metrics/metric-windows';
import { PlatformPrincipal } from '../providers/auth/platform-principal';
import { PackagesService } from '../packages/packages.service';
import { addHistogram, Histogram, quantiles } from './capability-metrics.histogram';
import { CapabilityMetricsRepository, RollupRow } from './capability-metrics.repository';
import { TRACE_RETENTION_DAYS } from './execution-traces.service';

const MINUTE_S = 60;
const DAY_S = 86_400;

/** How often the worker rolls the traces up (the metrics lag the traces by at most this, plus a run's duration). */
export const METRICS_ROLLUP_EVERY_MS = 60_000;

/**
 * The rollup's schedule: a trace is counted if it commits within two minutes of its `created_at` (a trace is one
 * statement whose `created_at` is its own start, so only a statement stalled that long is missed); a first run
 * reaches back over the longest window and a day more; minutes serve only the 1-hour window, hours the others.
 */
export const ROLLUP_WINDOW = {
  marginSeconds: 2 * MINUTE_S,
  lookbackSeconds: 8 * DAY_S,
  keepMinutesSeconds: 2 * DAY_S,
  keepHoursSeconds: TRACE_RETENTION_DAYS * DAY_S,
};

interface Totals {
  calls: number;
  errors: number;
  cached: number;
  codes: Record<string, number>;
  latency: Histogram;
}

const emptyTotals = (): Totals => ({ calls: 0, errors: 0, cached: 0, codes: {}, latency: {} });

function add(into: Totals, row: RollupRow): void {
  into.calls += row.calls;
  into.errors += row.errors;
  into.cached += row.cached;
  for (const [code, count] of Object.entries(row.error_codes)) into.codes[code] = (into.codes[code] ?? 0) + count;
  addHistogram(into.latency, row.latency);
}

function percentiles(latency: Histogram): { p50_ms: number | null; p95_ms: number | null } {
  const [p50, p95] = quantiles(latency, [0.5, 0.95]);
  return { p50_ms: p50, p95_ms: p95 };
}

const rate = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000);

/**
 * Metrics per capability of a package (calls, error rate and errors by code, p50 and p95 latency, and a series
 * for charts) over a window, read from the rollups that `rollup()` keeps (docs/metrics.md).
 */
@Injectable()
export class CapabilityMetrics {
  constructor(
    private readonly repository: CapabilityMetricsRepository,
    private readonly packages: PackagesService,
  ) {}

  /** One rollup run (the worker's job every METRICS_ROLLUP_EVERY_MS; idempotent). */
  rollup(): Promise<{ from: Date; minutes: number }> {
    return this.repository.rollup(ROLLUP_WINDOW);
  }

  async forPackage(principal: PlatformPrincipal, packageId: string, window: MetricWindow = DEFAULT_METRIC_WINDOW, capability?: string) {
    await this.packages.owned(principal, packageId);
    const { from, bucketMs, buckets } = windowBuckets(window);
    const { rows, rolledUpTo } = await this.repository.read(window === '1h' ? 'minute' : 'hour', packageId, from, capability);
    const byCapability = new Map<string, RollupRow[]>();
    for (const row of rows) {
      const list = byCapability.get(row.capability);
      if (list) list.push(row);
      else byCapability.set(row.capability, [row]);
    }
    const capabilities = [...byCapability.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, list]) => this.capabilityMetrics(name, list, from, bucketMs, buckets));
    return {
      package_id: packageId,
      window,
      bucket_seconds: bucketMs / 1000,
      from: from.toISOString(),
      to: new Date(from.getTime() + buckets * bucketMs).toISOString(),
      rolled_up_to: rolledUpTo,
      capabilities,
    };
  }

  private capabilityMetrics(name: string, rows: RollupRow[], from: Date, bucketMs: number, buckets: number) {
    const total = emptyTotals();
    const series = Array.from({ length: buckets }, emptyTotals);
    for (const row of rows) {
      add(total, row);
      const index = Math.floor((new Date(row.bucket_start).getTime() - from.getTime()) / bucketMs);
      if (index >= 0 && index < buckets) add(series[index], row);
    }
    return {
      name,
      calls: total.calls,
      errors: total.errors,
      error_rate: rate(total.errors, total.calls),
      errors_by_code: Object.entries(total.codes)
        .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
        .map(([code, count]) => ({ code, count })),
      cached: total.cached,
      ...percentiles(total.latency),
      series: series.map((bucket, i) => ({
        start: new Date(from.getTime() + i * bucketMs).toISOString(),
        calls: bucket.calls,
        errors: bucket.errors,
        ...percentiles(bucket.latency),
      })),
    };
  }
}
