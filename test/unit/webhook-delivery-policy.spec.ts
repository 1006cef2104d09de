import { retryAfterMs, retryDelayMs, verdictFor } from '../../src/modules/webhooks/delivery-policy';

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
