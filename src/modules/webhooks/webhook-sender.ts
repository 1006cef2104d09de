import { LookupAddress, lookup as dnsLookup } from 'node:dns';
import { Agent, request } from 'node:https';
import { RESPONSE_BODY_LIMIT } from './delivery-policy';
import { isPrivateAddress } from '../../common/http/target-policy';

export interface SendResult {
  status: number | null;
  headers: Record<string, string | string[] | undefined>;
  body: string | null;
  latencyMs: number;
  /** Set when no HTTP status came back in time: timeout, dns_error, connection_error, tls_error, blocked_target. */
  errorClass: string | null;
  error: string | null;
}

/** Keep-alive connections per endpoint: a burst of deliveries does not pay a TLS handshake each. */
const AGENT = new Agent({ keepAlive: true, maxSockets: 64 });

/**
 * One HTTPS POST of exact bytes. Redirects are never followed (a 3xx is just a
 * status). With `allowPrivate` off, the address is checked after DNS
 * resolution, at connect time, so a host that re-resolves to a private address
 * after registration (DNS rebinding) is refused too.
 */
export function sendWebhook(
  url: URL,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  allowPrivate: boolean,
): Promise<SendResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    let settled = false;
    let status: number | null = null;
    let responseHeaders: SendResult['headers'] = {};
    const chunks: Buffer[] = [];
    let kept = 0;
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
      req.destroy();
    };
    const req = request(
      url,
      {
        method: 'POST',
        agent: AGENT,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        lookup: (hostname, options, callback) =>
          dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
            if (error) return callback(error, '', 4);
            const blocked = !allowPrivate && addresses.some((a) => isPrivateAddress(a.address));
            if (blocked)
              return callback(Object.assign(new Error('target resolves to a private address'), { code: 'EBLOCKEDTARGET' }), '', 4);
            if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
            callback(null, addresses[0].address, addresses[0].family);
          }),
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
    const timer = setTimeout(() => finish('timeout', `no response within ${timeoutMs} ms`), timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => finish(classify(error), error.message));
    req.end(body);
  });
}

function classify(error: NodeJS.ErrnoException): string {
  if (error.code === 'EBLOCKEDTARGET') return 'blocked_target';
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return 'dns_error';
  if (/CERT|SSL|TLS|SELF_SIGNED/i.test(error.code ?? '') || /certificate|ssl|tls/i.test(error.message)) return 'tls_error';
  return 'connection_error';
}
