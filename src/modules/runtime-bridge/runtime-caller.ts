import type { OutboundHttp } from '../../common/http/outbound-http';
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
  http: Pick<OutboundHttp, 'fetch'>,
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
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let response: Response;
  try {
    response = await http.fetch(url, {
      method: init.method,
      headers: init.headers,
      body: init.body,
      signal,
      retryStaleConnection: init.retryStaleConnection,
    });
  } catch (error) {
    return classify(error, url, limits.timeoutMs);
  }
  const contentType = response.headers.get('content-type') ?? '';
  const declared = Number(response.headers.get('content-length'));
  const retryAfterHeader = parseRetryAfter(response.headers.get('retry-after'));
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    return { kind: 'oversize', detail: `the runtime answered ${declared} bytes, more than the ${limits.maxBytes} bytes allowed` };
  }
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  try {
    const reader = response.body?.getReader() as ReadableStreamDefaultReader<Uint8Array> | undefined;
    while (reader) {
      const chunk = await reader.read();
      if (chunk.done) break;
      bytes += chunk.value.byteLength;
      if (bytes > limits.maxBytes) {
        await reader.cancel().catch(() => undefined);
        return { kind: 'oversize', detail: `the runtime answered more than the ${limits.maxBytes} bytes allowed` };
      }
      chunks.push(chunk.value);
    }
  } catch (error) {
    return classify(error, url, limits.timeoutMs);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let json: unknown;
  let jsonOk = false;
  if (/^application\/(?:[\w.+-]+\+)?json\s*(;|$)/i.test(contentType)) {
    try {
      json = JSON.parse(text);
      jsonOk = true;
    } catch {
      jsonOk = false;
    }
  }
  return { kind: 'response', status: response.status, contentType, json, jsonOk, bytes, retryAfterHeader };
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
