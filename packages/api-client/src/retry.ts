import { retryAfterSeconds } from './errors';

export interface RetryPolicy {
  /** Further attempts after the first (default 3). */
  retries?: number;
  /**
   * The longest wait before one retry, in ms (default 30 000). A `Retry-After` asking for more is not shortened
   * (a retry sooner than asked only earns another refusal): the answer is returned as it is instead.
   */
  maxDelayMs?: number;
  /** First backoff when the answer names no `Retry-After`, doubled per retry with full jitter (default 250). */
  baseDelayMs?: number;
  /** Retry a call that got no answer when repeating it is safe (default true). */
  networkErrors?: boolean;
}

/** Answers worth repeating as they are: rate limited, or the service (a dependency of it) briefly unavailable. */
const RETRYABLE_STATUS = new Set([429, 503]);
/** Methods that may be repeated without a second effect (RFC 9110 §9.2.2). */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** May this request be sent again after it got no answer (the first may have had its effect)? */
export function repeatable(request: Request): boolean {
  return IDEMPOTENT_METHODS.has(request.method) || request.headers.has('idempotency-key');
}

function backoff(policy: Required<RetryPolicy>, retry: number): number {
  return Math.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  const reason = () => (signal?.reason instanceof Error ? signal.reason : new Error('The call was aborted'));
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(reason());
    const onAbort = () => {
      clearTimeout(timer);
      reject(reason());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A `fetch` that repeats 429 and 503 answers after the `Retry-After` they name (or a jittered backoff), and
 * repeats calls that got no answer when they are `repeatable`. Every attempt sends a copy of the same request,
 * so its headers (the `Idempotency-Key` among them) are the same on each.
 */
export function retryingFetch(
  base: (request: Request) => Promise<Response>,
  options: RetryPolicy = {},
): (request: Request) => Promise<Response> {
  const policy: Required<RetryPolicy> = { retries: 3, maxDelayMs: 30_000, baseDelayMs: 250, networkErrors: true, ...options };
  return async (request) => {
    // The body is read once and every attempt sends those bytes as a plain body. A cloned request's body is a
    // stream instead, which a browser sends as a streamed upload: its developer tools, extensions and tests see no
    // request body, and some proxies refuse it.
    const body = request.body === null ? null : await request.arrayBuffer();
    const attempt = () => (body === null ? new Request(request) : new Request(request, { body }));
    for (let retry = 0; ; retry += 1) {
      const last = retry >= policy.retries;
      let response: Response;
      try {
        response = await base(attempt());
      } catch (error) {
        if (last || !policy.networkErrors || !repeatable(request) || request.signal?.aborted) throw error;
        await sleep(backoff(policy, retry), request.signal);
        continue;
      }
      if (last || !RETRYABLE_STATUS.has(response.status)) return response;
      const asked = retryAfterSeconds(response.headers.get('retry-after'));
      const delay = asked === null ? backoff(policy, retry) : asked * 1000;
      if (delay > policy.maxDelayMs) return response;
      // The refused answer's body is not read: release its connection before waiting.
      await response.body?.cancel().catch(() => undefined);
      await sleep(delay, request.signal);
    }
  };
}
