import { TIER_LIMITS, tierLimits } from '../../common/app-tiers';
import { ProblemError } from '../../common/errors/problem-error';

/**
 * The runtime response timeout of a tier. `RUNTIME_TIMEOUT_MS` (default 10 s)
 * is Free's; the other tiers keep the spec's proportions to it (15 s and 30 s
 * at the default), so a deployment (or a test) that shortens it shortens them all.
 */
export function runtimeTimeoutMs(tier: string | null | undefined, freeTimeoutMs: number): number {
  return Math.round((freeTimeoutMs * tierLimits(tier).timeoutMs) / TIER_LIMITS.free.timeoutMs);
}

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
