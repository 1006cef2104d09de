/**
 * What the suite recorded of one call to a runtime: the shapes the judging
 * functions (runtime-answers.ts) read, whichever HTTP client made the call
 * (the service's, which refuses private addresses, or the CLI's).
 */
export interface NetworkFailure {
  kind: 'timeout' | 'tls' | 'refused' | 'dns' | 'closed' | 'blocked' | 'other';
  detail: string;
}

export interface RuntimeResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  text: string;
  bytes: number;
  /** The body was larger than the size limit; `text` holds only what was read before stopping. */
  oversize: boolean;
}

export interface Exchange {
  label: string;
  method: string;
  url: string;
  durationMs: number;
  response?: RuntimeResponse;
  failure?: NetworkFailure;
  /** An SSE stream read for a bounded window (not counted for latency). */
  stream?: boolean;
}

export interface SseEvent {
  event: string;
  data: string;
}

/** The body as JSON when the response declares `application/json` and parses; undefined otherwise. */
export function jsonBody(response: RuntimeResponse | undefined): unknown {
  if (!response || response.oversize || !isJsonType(response)) return undefined;
  try {
    return JSON.parse(response.text) as unknown;
  } catch {
    return undefined;
  }
}

export function isJsonType(response: RuntimeResponse): boolean {
  return /^application\/json\s*(;|$)/i.test(response.headers['content-type'] ?? '');
}

/** Why an exchange did not produce an HTTP response, or a short description of the response it got. */
export function describeExchange(exchange: Exchange): string {
  if (exchange.failure) return exchange.failure.detail;
  const r = exchange.response!;
  if (r.status >= 300 && r.status < 400) return `answered ${r.status} (redirects are not followed)`;
  return `answered ${r.status}${r.headers['content-type'] ? ` ${r.headers['content-type']}` : ''}`;
}
