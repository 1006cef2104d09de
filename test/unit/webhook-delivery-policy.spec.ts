import { MAX_CHAIN_MS, MAX_RETRIES, retryAfterMs, retryDelayMs, verdictFor } from '../../src/modules/webhooks/delivery-policy';

describe('webhook response table', () => {
  it.each([
    [200, 'delivered'],
    [202, 'delivered'],
    [301, 'retry'],
    [302, 'retry'],
    [400, 'failed'],
    [401, 'failed'],
    [403, 'failed'],
    [404, 'retry'],
    [429, 'retry'],
    [500, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
    [null, 'retry'],
  ])('answers %s with %s', (status, outcome) => {
    expect(verdictFor(status).outcome).toBe(outcome);
  });

  it('disables on 410 Gone', () => {
    expect(verdictFor(410)).toEqual({ outcome: 'failed', disable: true });
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60_000);
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });

  it("follows Svix's first five steps from a 5 s base, with jitter, never sooner than Retry-After", () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(n, 5_000, undefined, mid))).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000]);
    expect(retryDelayMs(1, 5_000, 60_000, mid)).toBe(60_000);
    expect(retryDelayMs(1, 5_000, undefined, () => 0)).toBe(4_000);
  });
});

describe('webhook delivery rules at their boundaries', () => {
  it.each([100, 101, 199, 300, 301, 302, 304, 399])('does not count %s as delivered (not 2xx; redirects are not followed)', (status) => {
    expect(verdictFor(status)).toEqual({ outcome: 'retry' });
  });

  it.each([200, 201, 202, 204, 299])('counts %s (any 2xx) as delivered', (status) => {
    expect(verdictFor(status)).toEqual({ outcome: 'delivered' });
  });

  it.each([400, 401, 403, 418, 499])('does not retry %s', (status) => {
    expect(verdictFor(status)).toEqual({ outcome: 'failed' });
  });

  it.each([404, 408, 500, 502, 503, 599, null])('retries %s without a receiver-given delay', (status) => {
    expect(verdictFor(status)).toEqual({ outcome: 'retry' });
  });

  it('retries a 429 honouring its Retry-After, in seconds or as an HTTP date, and without one when it is absent', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(verdictFor(429, { 'retry-after': '7' }, now)).toEqual({ outcome: 'retry', retryAfterMs: 7_000 });
    expect(verdictFor(429, { 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }, now)).toEqual({ outcome: 'retry', retryAfterMs: 30_000 });
    expect(verdictFor(429, {}, now)).toEqual({ outcome: 'retry', retryAfterMs: undefined });
  });

  it('ignores Retry-After on statuses other than 429', () => {
    expect(verdictFor(503, { 'retry-after': '7' })).toEqual({ outcome: 'retry' });
  });

  it('allows at most 5 retries within at most 24 hours', () => {
    expect(MAX_RETRIES).toBe(5);
    expect(MAX_CHAIN_MS).toBe(24 * 60 * 60 * 1000);
  });
});

describe('Retry-After parsing', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it.each([
    ['0', 0],
    ['5', 5_000],
    [' 5 ', 5_000],
    ['3600', 3_600_000],
  ])('reads delay-seconds %j', (raw, ms) => {
    expect(retryAfterMs(raw, now)).toBe(ms);
  });

  it.each(['12abc', 'abc12', '', 'soon', '-5', '1.5', '1 2'])('refuses the unreadable value %j', (raw) => {
    expect(retryAfterMs(raw, now)).toBeUndefined();
  });

  it('is undefined when the header is absent', () => {
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });

  it('takes the first of repeated headers', () => {
    expect(retryAfterMs(['9', '1'], now)).toBe(9_000);
    expect(retryAfterMs([], now)).toBeUndefined();
  });

  it('turns a past HTTP date into no delay, never a negative one', () => {
    expect(retryAfterMs('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:00 GMT', now)).toBe(0);
  });

  it('measures an HTTP date from the given now', () => {
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:01 GMT', now)).toBe(1_000);
  });
});

describe('retry delays', () => {
  it('jitters each step by ±20 % around the schedule', () => {
    expect(retryDelayMs(1, 5_000, undefined, () => 0)).toBe(4_000);
    expect(retryDelayMs(1, 5_000, undefined, () => 1)).toBe(6_000);
    expect(retryDelayMs(2, 5_000, undefined, () => 0.25)).toBe(270_000);
    expect(retryDelayMs(3, 1_000, undefined, () => 0.75)).toBe(396_000);
  });

  it('rounds to whole milliseconds', () => {
    expect(retryDelayMs(1, 1, undefined, () => 0.3)).toBe(1);
    expect(retryDelayMs(1, 3, undefined, () => 0)).toBe(2);
  });

  it('keeps the last step for retries beyond the schedule', () => {
    expect(retryDelayMs(6, 5_000, undefined, () => 0.5)).toBe(18_000_000);
    expect(retryDelayMs(9, 5_000, undefined, () => 0.5)).toBe(18_000_000);
  });

  it('waits for Retry-After only when it is longer than the backoff', () => {
    expect(retryDelayMs(2, 5_000, 1_000, () => 0.5)).toBe(300_000);
    expect(retryDelayMs(2, 5_000, 300_001, () => 0.5)).toBe(300_001);
    expect(retryDelayMs(2, 5_000, 0, () => 0.5)).toBe(300_000);
  });

  it('uses Math.random when no random source is given, staying within the jitter band', () => {
    const delay = retryDelayMs(1, 5_000);
    expect(delay).toBeGreaterThanOrEqual(4_000);
    expect(delay).toBeLessThanOrEqual(6_000);
  });
});
