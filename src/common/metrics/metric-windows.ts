import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';

/**
 * The windows of the provider metrics (capabilities and webhook deliveries), each a run of whole buckets ending
 * with the current one, as dashboards draw them: `1h` is 60 one-minute buckets, `24h` 24 one-hour buckets, `7d`
 * 168 one-hour buckets. So a window covers its length less at most one bucket, plus the current bucket so far.
 */
export const METRIC_WINDOWS = {
  '1h': { bucketMs: 60_000, buckets: 60 },
  '24h': { bucketMs: 3_600_000, buckets: 24 },
  '7d': { bucketMs: 3_600_000, buckets: 168 },
} as const;
export type MetricWindow = keyof typeof METRIC_WINDOWS;
export const METRIC_WINDOW_NAMES = Object.keys(METRIC_WINDOWS) as MetricWindow[];

/** The buckets of a window at `now`: the first bucket's start and the bucket length. */
export function windowBuckets(window: MetricWindow, now = Date.now()): { from: Date; bucketMs: number; buckets: number } {
  const { bucketMs, buckets } = METRIC_WINDOWS[window];
  const current = Math.floor(now / bucketMs) * bucketMs;
  return { from: new Date(current - (buckets - 1) * bucketMs), bucketMs, buckets };
}

export const DEFAULT_METRIC_WINDOW: MetricWindow = '24h';

/** `?window=` of a metrics route (default `24h`); an unknown window is a 400 naming the field. */
export class MetricWindowQuery {
  @ApiPropertyOptional({
    enum: METRIC_WINDOW_NAMES,
    default: DEFAULT_METRIC_WINDOW,
    description: '1h: 60 one-minute buckets; 24h: 24 one-hour buckets; 7d: 168 one-hour buckets',
  })
  @IsOptional()
  @IsIn(METRIC_WINDOW_NAMES, { message: `window must be one of ${METRIC_WINDOW_NAMES.join(', ')}` })
  window?: MetricWindow;
}
