import type { ClientRequest } from 'node:http';
import { BLOCKED_TARGET, OutboundHttp } from '../../common/http/outbound-http';
import { RESPONSE_BODY_LIMIT } from './delivery-policy';

export interface SendResult {
  status: number | null;
  headers: Record<string, string | string[] | undefined>;
  body: string | null;
  latencyMs: number;
  /** Set when no HTTP status came back in time: timeout, dns_error, connection_error, tls_error, blocked_target. */
  errorClass: string | null;
  error: string | null;
}

/**
 * One HTTPS POST of exact bytes through the service's outbound client (its
 * keep-alive agent spares a burst of deliveries a TLS handshake each).
 * Redirects are never followed (a 3xx is just a status). Unless private
 * targets are allowed, the address is checked after DNS resolution, at
 * connect time, so a host that re-resolves to a private address after
 * registration (DNS rebinding) is refused too.
 */
export function sendWebhook(
  url: URL,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  http: OutboundHttp,
): Promise<SendResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    let settled = false;
    let status: number | null = null;
    let responseHeaders: SendResult['headers'] = {};
    const chunks: Buffer[] = [];
    let kept = 0;
    let req: ClientRequest | undefined;
    const finish = (errorClass: string | null, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const text = status === null ? null : Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString('utf8');
      resolve({
        status,
        headers: responseHeaders,
        body: text,
        latencyMs: Date.now() - started,
        errorClass: status === null ? errorClass : null,
        error: status === null ? error : null,
      });
      req?.destroy();
    };
    try {
      req = http.request(
        url,
        {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          status = res.statusCode ?? null;
          responseHeaders = res.headers;
          res.on('data', (chunk: Buffer) => {
            if (kept < RESPONSE_BODY_LIMIT) chunks.push(chunk);
            kept += chunk.length;
            // Enough for the log: stop reading rather than download a large answer.
            if (kept >= RESPONSE_BODY_LIMIT) finish(null, null);
          });
          res.on('end', () => finish(null, null));
          res.on('error', () => finish(null, null));
        },
      );
    } catch (error) {
      return resolve({
        status: null,
        headers: {},
        body: null,
        latencyMs: 0,
        errorClass: classify(error as NodeJS.ErrnoException),
        error: (error as Error).message,
      });
    }
    const timer = setTimeout(() => finish('timeout', `no response within ${timeoutMs} ms`), timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => finish(classify(error), error.message));
    req.end(body);
  });
}

function classify(error: NodeJS.ErrnoException): string {
  if (error.code === BLOCKED_TARGET) return 'blocked_target';
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return 'dns_error';
  if (/CERT|SSL|TLS|SELF_SIGNED/i.test(error.code ?? '') || /certificate|ssl|tls/i.test(error.message)) return 'tls_error';
  return 'connection_error';
}
