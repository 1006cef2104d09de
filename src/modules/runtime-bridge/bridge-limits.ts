import { ProblemError } from '../../common/errors/problem-error';

export type PlatformTier = 'free' | 'pro' | 'enterprise';

/** Provider platform limits per tier (spec: Limits, provider platform). */
export const TIER_LIMITS: Record<
  PlatformTier,
  { statePerMinute: number; actionPerMinute: number; historyPerMinute: number; realtimeConnections: number; maxResponseBytes: number }
> = {
  free: { statePerMinute: 100, actionPerMinute: 20, historyPerMinute: 50, realtimeConnections: 2, maxResponseBytes: 256 * 1024 },
  pro: { statePerMinute: 1_000, actionPerMinute: 200, historyPerMinute: 500, realtimeConnections: 10, maxResponseBytes: 1024 * 1024 },
  enterprise: {
    statePerMinute: 10_000,
    actionPerMinute: 2_000,
    historyPerMinute: 5_000,
    realtimeConnections: 100,
    maxResponseBytes: 5 * 1024 * 1024,
  },
};

/**
 * Apps carry no tier yet, so every app is on Free, the spec's default; the
 * table above is ready for when billing assigns one.
 */
export const APP_TIER: PlatformTier = 'free';

/** Runtime retry semantics: base delay (configurable), cap 5 minutes, at most 3 retries. */
export const MAX_RETRIES = 3;
export const MAX_RETRY_DELAY_MS = 5 * 60 * 1000;

/**
 * Delay before retry number `retry` (0-based): full-jitter exponential backoff
 * (AWS architecture blog), so many callers failing together do not retry together;
 * a runtime's `retryAfter` (seconds) takes precedence over the schedule.
 */
export function retryDelayMs(retry: number, baseMs: number, retryAfterSeconds?: number): number {
  if (typeof retryAfterSeconds === 'number' && Number.isFinite(retryAfterSeconds) && retryAfterSeconds >= 0) {
    return Math.min(retryAfterSeconds * 1000, MAX_RETRY_DELAY_MS);
  }
  const ceiling = Math.min(baseMs * 2 ** retry, MAX_RETRY_DELAY_MS);
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/** A 429 with `Retry-After` for a bridge limit. */
export function limitExceeded(detail: string, retryAfterSeconds: number): ProblemError {
  return new ProblemError('rate_limit_exceeded', detail, {}, { 'Retry-After': String(Math.max(1, retryAfterSeconds)) });
}
