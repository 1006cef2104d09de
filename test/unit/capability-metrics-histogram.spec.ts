import { addHistogram, Histogram, LATENCY_BUCKET_BOUNDS, quantiles } from '../../src/modules/runtime-bridge/capability-metrics.histogram';

/** The bucket PostgreSQL's `width_bucket(duration_ms, LATENCY_BUCKET_BOUNDS)` gives: how many lower bounds are ≤ the duration. */
const bucketOf = (ms: number) => LATENCY_BUCKET_BOUNDS.filter((bound) => ms >= bound).length;

function histogramOf(durations: number[]): Histogram {
  const histogram: Histogram = {};
  for (const ms of durations) histogram[bucketOf(ms)] = (histogram[bucketOf(ms)] ?? 0) + 1;
  return histogram;
}

const nearestRank = (durations: number[], q: number) =>
  [...durations].sort((a, b) => a - b)[Math.max(1, Math.ceil(q * durations.length)) - 1];

/** A small deterministic generator, so a failure is reproducible. */
function samples(seed: number, count: number, spread: number): number[] {
  let state = seed;
  const next = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: count }, () => Math.round(Math.exp(Math.log(20) + spread * (next() * 2 - 1))));
}

describe('capability metrics latency histogram', () => {
  it('has 65 lower bounds from 1 ms to 65,536 ms, each 2^(1/4) times the one before', () => {
    expect(LATENCY_BUCKET_BOUNDS).toHaveLength(65);
    expect(LATENCY_BUCKET_BOUNDS[0]).toBe(1);
    expect(LATENCY_BUCKET_BOUNDS[64]).toBe(65_536);
    for (let i = 1; i < 65; i += 1) expect(LATENCY_BUCKET_BOUNDS[i] / LATENCY_BUCKET_BOUNDS[i - 1]).toBeCloseTo(2 ** 0.25, 12);
  });

  it('answers null for an empty histogram', () => {
    expect(quantiles({}, [0.5, 0.95])).toEqual([null, null]);
    expect(quantiles({ 12: 0 }, [0.5])).toEqual([null]);
  });

  it.each([
    [1, 200, 2],
    [2, 1000, 4],
    [3, 7, 1],
    [4, 5000, 6],
  ])('estimates p50, p95 and p99 within one bucket of the exact nearest-rank value (seed %i, %i samples)', (seed, count, spread) => {
    const durations = samples(seed, count, spread);
    const estimates = quantiles(histogramOf(durations), [0.5, 0.95, 0.99]);
    [0.5, 0.95, 0.99].forEach((q, i) => {
      const exact = nearestRank(durations, q);
      const estimate = estimates[i] as number;
      expect(bucketOf(estimate - 0.05)).toBeGreaterThanOrEqual(bucketOf(exact));
      expect(estimate).toBeGreaterThanOrEqual(exact / 2 ** 0.25 - 0.05);
      expect(estimate).toBeLessThanOrEqual(exact * 2 ** 0.25 + 0.05);
    });
  });

  it('places a single value inside its own bucket and 0 ms below 1 ms', () => {
    expect(quantiles(histogramOf([100]), [0.5])[0]).toBeGreaterThan(LATENCY_BUCKET_BOUNDS[bucketOf(100) - 1]);
    expect(quantiles(histogramOf([100]), [0.5])[0]).toBeLessThanOrEqual(LATENCY_BUCKET_BOUNDS[bucketOf(100)]);
    expect(quantiles(histogramOf([0, 0, 0]), [0.5])[0]).toBeLessThanOrEqual(1);
  });

  it('answers the overflow bucket with its lower bound', () => {
    expect(quantiles({ 65: 3 }, [0.95])).toEqual([65_536]);
  });

  it('adds histograms bucket by bucket', () => {
    expect(addHistogram({ 1: 2, 5: 1 }, { 5: 3, 9: 1 })).toEqual({ 1: 2, 5: 4, 9: 1 });
  });

  it('ranks across buckets: the median of 1, 10 and 1000 is in the bucket of 10', () => {
    const [median] = quantiles(histogramOf([1, 10, 1000]), [0.5]);
    expect(bucketOf(median as number)).toBe(bucketOf(10));
  });
});
