/** At most this many retries after the first attempt (spec: 5). */
export const MAX_RETRIES = 5;
/** A chain of attempts ends this long after its first attempt (spec: 24 hours). */
export const MAX_CHAIN_MS = 24 * 3_600_000;
/** Multiples of the base delay: with 5 s this is Svix's 5 s, 5 min, 30 min, 2 h, 5 h. */
const SCHEDULE = [1, 60, 360, 1440, 3600];
/** The first 4 KB of a response body are kept in the log. */
export const RESPONSE_BODY_LIMIT = 4096;

export type AttemptVerdict =
  { outcome: 'delivered' } | { outcome: 'retry'; retryAfterMs?: number } | { outcome: 'failed'; disable?: boolean };

/**
 * The spec's response table. A status not listed there is treated by its
 * class: other 2xx delivered, other 4xx terminal (the receiver refuses the
 * request itself), everything else retried.
 */
export function verdictFor(
  status: number | null,
  headers: Record<string, string | string[] | undefined> = {},
  now = Date.now(),
): AttemptVerdict {
  if (status === null) return { outcome: 'retry' }; // timeout or connection error
  if (status >= 200 && status < 300) return { outcome: 'delivered' };
  if (status === 410) return { outcome: 'failed', disable: true };
  if (status === 429) return { outcome: 'retry', retryAfterMs: retryAfterMs(headers['retry-after'], now) };
  if (status === 404 || status === 408) return { outcome: 'retry' };
  if (status >= 400 && status < 500) return { outcome: 'failed' };
  return { outcome: 'retry' }; // 3xx (never followed) and 5xx
}

/** `Retry-After` as delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(raw: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  // An HTTP date names its weekday or month (RFC 9110 §5.6.7); Date.parse would also read "-5" or "1.5" as dates.
  if (!/[A-Za-z]{3}/.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Delay before retry number `retry` (1-based): the schedule step with ±20 %
 * jitter so receivers recovering from an outage are not hit in lockstep, and
 * never sooner than the receiver's `Retry-After`.
 */
export function retryDelayMs(retry: number, baseMs: number, retryAfter?: number, random = Math.random): number {
  const step = SCHEDULE[Math.min(retry, SCHEDULE.length) - 1] * baseMs;
  const jittered = Math.round(step * (0.8 + 0.4 * random()));
  return Math.max(jittered, retryAfter ?? 0);
}
