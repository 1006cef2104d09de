/**
 * Latency histograms of the capability metrics: fixed log-scale buckets, so a
 * percentile over any set of minutes or hours is computed from summed bucket
 * counts (as Prometheus histograms do) instead of from the raw traces.
 *
 * Bucket 0 holds durations below 1 ms; bucket k (1..64) holds
 * [2^((k-1)/4), 2^(k/4)) ms; bucket 65 holds 65,536 ms and more (longer than
 * any runtime timeout). Each bucket's upper bound is 2^(1/4) ≈ 1.19 times its
 * lower bound, which bounds the error of an estimate (docs/metrics.md).
 */
export const BUCKETS_PER_DOUBLING = 4;

/** Lower bounds of buckets 1..65 in ms: the thresholds PostgreSQL's `width_bucket` takes. */
export const LATENCY_BUCKET_BOUNDS: readonly number[] = Array.from({ length: 65 }, (_, i) => 2 ** (i / BUCKETS_PER_DOUBLING));

/** Sparse bucket counts, keyed by bucket index (as stored in the rollups' jsonb). */
export type Histogram = Record<string, number>;

/** Adds `from` into `into`. */
export function addHistogram(into: Histogram, from: Histogram): Histogram {
  for (const [bucket, count] of Object.entries(from)) into[bucket] = (into[bucket] ?? 0) + count;
  return into;
}

/**
 * The q-quantiles (0 < q ≤ 1) of the durations a histogram counts, in ms, or nulls when it counts none. The
 * nearest-rank value (the ⌈q·n⌉-th smallest) lies in the bucket where the running count first reaches that rank;
 * the estimate is placed inside that bucket by log-linear interpolation on the rank, so it and the exact
 * nearest-rank value share a bucket: they differ by less than a factor 2^(1/4) (about 19 %), or by at most 1 ms
 * below 1 ms. Rounded to 0.1 ms.
 */
export function quantiles(histogram: Histogram, qs: number[]): Array<number | null> {
  const counts = Object.entries(histogram)
    .map(([bucket, count]) => [Number(bucket), count] as const)
    .filter(([, count]) => count > 0)
    .sort(([a], [b]) => a - b);
  const total = counts.reduce((sum, [, count]) => sum + count, 0);
  return qs.map((q) => (total === 0 ? null : estimate(counts, Math.max(1, Math.ceil(q * total)))));
}

function estimate(counts: ReadonlyArray<readonly [number, number]>, rank: number): number {
  let seen = 0;
  for (const [bucket, count] of counts) {
    if (seen + count < rank) {
      seen += count;
      continue;
    }
    const position = (rank - seen) / count;
    if (bucket === 0) return round(position);
    const lower = LATENCY_BUCKET_BOUNDS[bucket - 1];
    if (bucket >= LATENCY_BUCKET_BOUNDS.length) return lower;
    return round(lower * 2 ** (position / BUCKETS_PER_DOUBLING));
  }
  return round(LATENCY_BUCKET_BOUNDS[LATENCY_BUCKET_BOUNDS.length - 1]);
}

const round = (ms: number) => Math.round(ms * 10) / 10;
