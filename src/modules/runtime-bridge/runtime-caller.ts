import type { Exchanged, OutboundHttp } from '../../common/http/outbound-http';
import { describeFailure } from '@soul-service/rules';

/** What one HTTP exchange with a runtime produced, before any interpretation of the envelope. */
export type CallResult =
  | { kind: 'response'; status: number; contentType: string; json: unknown; jsonOk: boolean; bytes: number; retryAfterHeader?: number }
  | { kind: 'timeout'; detail: string }
  | { kind: 'unavailable'; detail: string }
  | { kind: 'oversize'; detail: string };

/**
 * One call to a provider runtime through the service's outbound client (the
 * connected address is checked, as for every outbound call), with normal TLS
 * verification, no redirects, the tier's timeout over the whole exchange (headers and body)
 * and the tier's size cap enforced while the body streams in, so an oversized
 * answer is cut off rather than buffered. Never throws. The bearer token passes
 * through `headers` and is never logged or stored.
 */
export async function callRuntime(
  http: Pick<OutboundHttp, 'exchange'>,
  url: string,
  init: {
    method: 'POST' | 'GET';
    headers: Record<string, string>;
    body?: string;
    /**
     * The call is safe to send twice (a read, or an action with its idempotency
     * key): a reused connection the runtime closed while idle is retried once on
     * a new one, within the same timeout (`OutboundInit.retryStaleConnection`).
     */
    retryStaleConnection?: boolean;
  },
  limits: { timeoutMs: number; maxBytes: number },
): Promise<CallResult> {
  let answer: Exchanged;
  try {
    answer = await http.exchange(url, {
      method: init.method,
      headers: init.headers,
      body: init.body,
      timeoutMs: limits.timeoutMs,
      retryStaleConnection: init.retryStaleConnection,
      maxBytes: limits.maxBytes,
    });
  } catch (error) {
    return classify(error, url, limits.timeoutMs);
  }
  if (answer.kind === 'oversize') {
    return {
      kind: 'oversize',
      detail:
        answer.declared === null
          ? `the runtime answered more than the ${limits.maxBytes} bytes allowed`
          : `the runtime answered ${answer.declared} bytes, more than the ${limits.maxBytes} bytes allowed`,
    };
  }
  const contentType = header(answer.headers['content-type']);
  const retryAfterHeader = parseRetryAfter(header(answer.headers['retry-after']) || null);
  let json: unknown;
  let jsonOk = false;
  if (/^application\/(?:[\w.+-]+\+)?json\s*(;|$)/i.test(contentType)) {
    try {
      json = JSON.parse(answer.body.toString('utf8'));
      jsonOk = true;
    } catch {
      jsonOk = false;
    }
  }
  return { kind: 'response', status: answer.status, contentType, json, jsonOk, bytes: answer.body.length, retryAfterHeader };
}

/** A header as one string (Node gives a repeated one as an array for a few names; fetch joins them with ", "). */
function header(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

function classify(error: unknown, url: string, timeoutMs: number): CallResult {
  const failure = describeFailure(error, url, timeoutMs);
  const detail = failure.detail.replace(/^(capability_timeout|runtime_unavailable): /, '');
  return failure.kind === 'timeout' ? { kind: 'timeout', detail } : { kind: 'unavailable', detail };
}

function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}
