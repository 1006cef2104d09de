import { createParser, EventSourceMessage } from 'eventsource-parser';
import { BLOCKED_TARGET, HttpPort } from './ports';
import { Exchange, NetworkFailure, RuntimeResponse, SseEvent } from './runtime-exchange';

/**
 * The conformance suite's HTTP client for a provider runtime, over the host's
 * HTTP port (the service's outbound client checks every connection's address,
 * so a runtime host that re-resolves to an internal address mid-run is not called), with
 * normal TLS verification (the system store plus `NODE_EXTRA_CA_CERTS`), no redirects, a hard time limit and a size cap; every
 * exchange is recorded so later checks (latency, size, leaked credentials) look
 * at exactly what the runtime sent. Network failures never throw: they come back
 * as a failure with a sentence saying what happened.
 */
const TLS_CODES =
  /^(CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_TLS_|ERR_SSL_|HOSTNAME_MISMATCH|ERR_OSSL|EPROTO)/;

function errorChain(error: unknown): Array<{ name?: string; code?: string; message?: string }> {
  const chain: Array<{ name?: string; code?: string; message?: string }> = [];
  let current: unknown = error;
  for (let i = 0; i < 6 && typeof current === 'object' && current !== null; i += 1) {
    const e = current as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    chain.push({
      name: typeof e.name === 'string' ? e.name : undefined,
      code: typeof e.code === 'string' ? e.code : undefined,
      message: typeof e.message === 'string' ? e.message : undefined,
    });
    current = e.cause ?? (Array.isArray(e.errors) ? (e.errors as unknown[])[0] : undefined);
  }
  return chain;
}

/** Turns a fetch rejection into a `runtime_unavailable`/`capability_timeout` style sentence. */
export function describeFailure(error: unknown, url: string, timeoutMs: number): NetworkFailure {
  const chain = errorChain(error);
  const host = (() => {
    try {
      return new URL(url).host;
    } catch {
      return url;
    }
  })();
  if (chain.some((e) => e.name === 'TimeoutError')) {
    return { kind: 'timeout', detail: `capability_timeout: no complete response from ${host} within ${timeoutMs / 1000} s` };
  }
  const coded = chain.find((e) => e.code !== undefined);
  const code = coded?.code ?? '';
  const message = coded?.message ?? chain[chain.length - 1]?.message ?? 'unknown error';
  if (TLS_CODES.test(code)) {
    return {
      kind: 'tls',
      detail: `runtime_unavailable: the TLS certificate of ${host} is not trusted (${code}: ${message}); use a certificate from a public CA`,
    };
  }
  if (code === BLOCKED_TARGET) {
    return { kind: 'blocked', detail: `runtime_unavailable: not called, ${message}` };
  }
  if (code === 'ECONNREFUSED') return { kind: 'refused', detail: `runtime_unavailable: connection to ${host} refused (nothing listening)` };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return { kind: 'dns', detail: `runtime_unavailable: the host name of ${host} does not resolve (${code})` };
  }
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE' || code === 'UND_ERR_CLOSED') {
    return { kind: 'closed', detail: `runtime_unavailable: ${host} closed the connection before answering (${code})` };
  }
  return { kind: 'other', detail: `runtime_unavailable: request to ${host} failed (${code ? `${code}: ` : ''}${message})` };
}

export class RuntimeClient {
  readonly exchanges: Exchange[] = [];

  constructor(
    private readonly options: {
      timeoutMs: number;
      maxBytes: number;
      /** The host's HTTP port (the service's `OutboundHttp`). */
      http: Pick<HttpPort, 'fetch'>;
      /** Set when the target was refused before any call (SSRF policy, not https): every call fails with it. */
      blocked?: string;
    },
  ) {}

  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  async send(
    label: string,
    url: string,
    init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  ): Promise<Exchange> {
    const started = performance.now();
    const exchange: Exchange = { label, method: init.method, url, durationMs: 0 };
    this.exchanges.push(exchange);
    if (this.options.blocked) {
      exchange.failure = { kind: 'blocked', detail: this.options.blocked };
      return exchange;
    }
    try {
      const response = await this.options.http.fetch(url, {
        method: init.method,
        headers: init.headers,
        body: init.body,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      exchange.response = await this.readBody(response);
    } catch (error) {
      exchange.failure = describeFailure(error, url, this.options.timeoutMs);
    }
    exchange.durationMs = performance.now() - started;
    return exchange;
  }

  /**
   * Opens an SSE stream and reads it for at most `windowMs`, handing each event to
   * `enough`; stops as soon as `enough` returns true. A window that closes without
   * the wanted event is not a network failure: the caller judges the events.
   */
  async stream(
    label: string,
    url: string,
    headers: Record<string, string>,
    windowMs: number,
    enough: (event: SseEvent) => boolean,
  ): Promise<{ exchange: Exchange; events: SseEvent[] }> {
    const started = performance.now();
    const exchange: Exchange = { label, method: 'GET', url, durationMs: 0, stream: true };
    this.exchanges.push(exchange);
    const events: SseEvent[] = [];
    if (this.options.blocked) {
      exchange.failure = { kind: 'blocked', detail: this.options.blocked };
      return { exchange, events };
    }
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), windowMs);
    let response: Response;
    try {
      response = await this.options.http.fetch(url, { method: 'GET', headers, signal: controller.signal });
    } catch (error) {
      clearTimeout(timer);
      exchange.failure = controller.signal.aborted
        ? { kind: 'timeout', detail: `capability_timeout: no response headers from the stream within ${windowMs / 1000} s` }
        : describeFailure(error, url, this.options.timeoutMs);
      exchange.durationMs = performance.now() - started;
      return { exchange, events };
    }
    const contentType = response.headers.get('content-type') ?? '';
    if (response.status !== 200 || !contentType.toLowerCase().startsWith('text/event-stream')) {
      clearTimeout(timer);
      try {
        exchange.response = await this.readBody(response);
      } catch (error) {
        exchange.failure = describeFailure(error, url, this.options.timeoutMs);
      }
      exchange.durationMs = performance.now() - started;
      return { exchange, events };
    }
    const parser = new SseParser();
    const decoder = new TextDecoder();
    let text = '';
    let bytes = 0;
    let oversize = false;
    const reader = response.body?.getReader() as ReadableStreamDefaultReader<Uint8Array> | undefined;
    try {
      for (let done = reader === undefined; !done && reader;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        bytes += chunk.value.byteLength;
        if (bytes > this.options.maxBytes) {
          oversize = true;
          break;
        }
        const piece = decoder.decode(chunk.value, { stream: true });
        text += piece;
        for (const event of parser.push(piece)) {
          events.push(event);
          if (enough(event)) done = true;
        }
      }
    } catch {
      // The window closed (abort) or the runtime dropped the stream: judge what arrived.
    } finally {
      clearTimeout(timer);
      controller.abort();
      await reader?.cancel().catch(() => undefined);
    }
    exchange.response = { status: response.status, headers: headerRecord(response.headers), text, bytes, oversize };
    exchange.durationMs = performance.now() - started;
    return { exchange, events };
  }

  private async readBody(response: Response): Promise<RuntimeResponse> {
    const headers = headerRecord(response.headers);
    const declared = Number(headers['content-length']);
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    let oversize = Number.isFinite(declared) && declared > this.options.maxBytes;
    const reader = oversize ? undefined : (response.body?.getReader() as ReadableStreamDefaultReader<Uint8Array> | undefined);
    if (oversize) await response.body?.cancel().catch(() => undefined);
    while (reader) {
      const chunk = await reader.read();
      if (chunk.done) break;
      bytes += chunk.value.byteLength;
      if (bytes > this.options.maxBytes) {
        oversize = true;
        await reader.cancel().catch(() => undefined);
        break;
      }
      chunks.push(chunk.value);
    }
    return {
      status: response.status,
      headers,
      text: Buffer.concat(chunks).toString('utf8'),
      bytes: oversize && Number.isFinite(declared) ? declared : bytes,
      oversize,
    };
  }
}

function headerRecord(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    out[name.toLowerCase()] = value;
  });
  return out;
}

/**
 * Incremental parser of the `text/event-stream` format (WHATWG HTML,
 * server-sent events), over `eventsource-parser` (as the realtime supervisor
 * reads streams): each `push` answers the events its text completed.
 */
export class SseParser {
  private pending: SseEvent[] = [];
  private readonly parser = createParser({
    onEvent: (message: EventSourceMessage) => {
      this.pending.push({ event: message.event || 'message', data: message.data });
    },
  });

  push(text: string): SseEvent[] {
    this.parser.feed(text);
    const out = this.pending;
    this.pending = [];
    return out;
  }
}
