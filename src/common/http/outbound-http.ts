import type { ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { Agent, request, RequestOptions } from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { Global, Inject, Injectable, Module, OnApplicationShutdown, Optional } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { ProblemError } from '../errors/problem-error';
import { assertCallableTarget, assertCallableUrl, defaultLookup, DnsLookup, isCallableAddress } from './target-policy';

/**
 * Injection token of the resolver every outbound call uses (`DnsLookup`,
 * the shape of `dns.lookup` with `all: true`). Nothing provides it in
 * production, so `dns.lookup` is used; tests provide one from a `@Global()`
 * module passed to `startApi({ imports })` to script DNS answers.
 */
export const DNS_LOOKUP = Symbol('DNS_LOOKUP');

/** The error a connection refused by the target policy fails with (`error.code`). */
export const BLOCKED_TARGET = 'EBLOCKEDTARGET';

const blocked = (message: string) => Object.assign(new Error(message), { code: BLOCKED_TARGET });

/**
 * A socket `lookup` that resolves with `resolve` and, unless private targets
 * are allowed, fails the connection when ANY address is not public. Because
 * the socket connects to exactly the addresses checked here, a name that
 * re-resolves to an internal address after it was registered (DNS
 * rebinding) is refused too.
 */
export function checkedLookup(resolve: DnsLookup, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    const family = typeof options.family === 'number' ? options.family : options.family === 'IPv6' ? 6 : options.family === 'IPv4' ? 4 : 0;
    resolve(hostname, { all: true, family, hints: options.hints }, (error, addresses) => {
      if (error) return callback(error, '', 4);
      if (!addresses?.length) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 4);
      if (!allowPrivate && !addresses.every((a) => isCallableAddress(a.address))) {
        return callback(blocked(`${hostname} resolves to a loopback, private or link-local address`), '', 4);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

export interface OutboundInit {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Aborts the request, or the body still streaming in; fetch's semantics (the reason is what rejects). */
  signal?: AbortSignal;
  /**
   * Aborts as `signal: AbortSignal.timeout(timeoutMs)` would (the same
   * `TimeoutError`), with a plain timer cleared once the answer is read: a
   * timeout signal costs about 20 µs to make and lives, with its timer, until
   * it fires, long after the call is over.
   */
  timeoutMs?: number;
  /**
   * Sends the request once more, on a new connection, when a reused keep-alive
   * connection fails (`ECONNRESET`, `EPIPE`, `ECONNABORTED`) before any byte of
   * the answer arrived: the server closed it while idle just as it was reused
   * (the keep-alive race). Only for calls that are safe to repeat: reads, or
   * calls carrying an idempotency key the target honours. The body is a string,
   * so it can be sent again; `signal` bounds both attempts together.
   */
  retryStaleConnection?: boolean;
}

/** How a request on a reused connection fails when the server had closed that connection. */
const STALE_CONNECTION_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/**
 * How long an idle pooled connection is kept: below the 5 s idle timeout of
 * Node's HTTP server (and Apache's), the shortest common one, so the agent
 * drops it before the server does. A server's `Keep-Alive: timeout=N` hint
 * shortens it further (Node's agent then uses N - 1 s, but only when this
 * option is set: without it the hint is ignored). On a busy socket the timer
 * only emits `'timeout'`, which nothing here acts on, so long answers and
 * realtime streams are unaffected.
 */
export const FREE_SOCKET_TIMEOUT_MS = 4_000;

/**
 * The one way the service calls out over HTTPS (provider runtimes: bridge
 * calls, realtime streams, conformance runs; webhook deliveries): one
 * keep-alive agent whose socket `lookup` is the checked one above, and a
 * synchronous check of the URL itself (scheme, credentials, local names,
 * literal addresses, which never reach a resolver). TLS is verified as usual
 * (system store plus NODE_EXTRA_CA_CERTS), against the URL's host name.
 * Redirects are never followed. `ALLOW_PRIVATE_TARGETS` turns the address
 * checks off, nothing else.
 */
@Injectable()
export class OutboundHttp implements OnApplicationShutdown {
  /**
   * Idle connections are kept (64 per host) so bursts skip the TLS handshake;
   * busy ones are not capped here, since a realtime stream holds its socket
   * for hours and callers bound their own concurrency.
   */
  readonly agent: Agent;
  readonly allowPrivate: boolean;
  private readonly resolve: DnsLookup;
  private readonly lookup: LookupFunction;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'allowPrivateTargets'>, @Optional() @Inject(DNS_LOOKUP) resolve?: DnsLookup) {
    this.allowPrivate = config.allowPrivateTargets;
    this.resolve = resolve ?? defaultLookup;
    this.lookup = checkedLookup(this.resolve, this.allowPrivate);
    this.agent = new Agent({
      keepAlive: true,
      maxFreeSockets: 64,
      scheduling: 'lifo',
      timeout: FREE_SOCKET_TIMEOUT_MS,
      lookup: this.lookup,
    });
  }

  onApplicationShutdown(): void {
    this.agent.destroy();
  }

  /** The registration-time check (`assertCallableTarget`) with this service's rules and resolver. */
  assertCallable(raw: string, field: string, options: { resolve?: boolean } = {}): Promise<URL> {
    return assertCallableTarget(raw, field, { allowPrivate: this.allowPrivate, lookup: this.resolve, resolve: options.resolve });
  }

  /**
   * `https.request` through the checked agent. Throws (code `EBLOCKEDTARGET`)
   * before any connection when the URL itself is refused.
   */
  request(url: URL, options: RequestOptions, onResponse?: (res: IncomingMessage) => void): ClientRequest {
    return this.open(url, options, false, onResponse);
  }

  /**
   * A `fetch` over `request`: the same `Response` (body streamed, never
   * decompressed), rejecting like fetch (a `TypeError` whose `cause` carries the
   * socket's error code, or the signal's reason when aborted). With
   * `retryStaleConnection`, a reused connection the server had already closed
   * is retried once on a new one (see `OutboundInit`). For answers read as a
   * stream (realtime); a short answer read whole is cheaper with `exchange`.
   */
  fetch(target: string | URL, init: OutboundInit = {}): Promise<Response> {
    return this.send(target, init, (answer, resolve) => resolve(toResponse(answer)));
  }

  /**
   * The request of `fetch`, its answer read whole into one buffer, no more than
   * `maxBytes` of it: an answer declared or found larger is cut off
   * (`oversize`) rather than read on. Rejects as `fetch` does, also when the
   * body fails or `signal` aborts while it streams in. Node's own stream, with
   * no WHATWG `Response`, `Headers` or web stream between: on the bridge's
   * path those cost more CPU than the rest of the exchange's JavaScript.
   */
  exchange(target: string | URL, init: OutboundInit & { maxBytes: number }): Promise<Exchanged> {
    return this.send<Exchanged>(target, init, (answer, resolve, reject, abortedWith) =>
      readWhole(answer, init.maxBytes, abortedWith, resolve, reject),
    );
  }

  /**
   * Sends the request (again on a fresh connection when a stale one failed;
   * see `OutboundInit.retryStaleConnection`) and hands the answer to `onAnswer`,
   * which settles the promise. Before the answer, failures reject like fetch.
   */
  private send<T>(
    target: string | URL,
    init: OutboundInit,
    onAnswer: (
      answer: IncomingMessage,
      resolve: (value: T) => void,
      reject: (error: unknown) => void,
      /** Why the call was aborted (the signal's reason, or the timeout); undefined while it was not. */
      abortedWith: () => unknown,
    ) => void,
  ): Promise<T> {
    const { signal } = init;
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const url = typeof target === 'string' ? new URL(target) : target;
      const body = init.body === undefined ? undefined : Buffer.from(init.body);
      const headers: Record<string, string | number> = { ...init.headers };
      if (body) headers['content-length'] = body.length;
      let req: ClientRequest;
      let res: IncomingMessage | undefined;
      let abortReason: Error | undefined;
      const abort = (reason: Error) => {
        abortReason ??= reason;
        req.destroy(reason);
        res?.destroy(reason);
      };
      const onAbort = () => abort(signal!.reason as Error);
      const timer =
        init.timeoutMs === undefined
          ? undefined
          : setTimeout(() => abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), init.timeoutMs);
      timer?.unref();
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const send = (fresh: boolean) => {
        // Whether any byte of the answer came in (a status line cut short counts): then the server did see the request.
        let answered = false;
        let stopWatching = () => {};
        try {
          req = this.open(url, { method: init.method ?? 'GET', headers }, fresh, (answer) => {
            stopWatching();
            res = answer;
            answer.once('close', done);
            try {
              onAnswer(answer, resolve, reject, () => abortReason);
            } catch (error) {
              answer.destroy();
              done();
              reject(new TypeError('fetch failed', { cause: error }));
            }
          });
        } catch (error) {
          done();
          return reject(new TypeError('fetch failed', { cause: error }));
        }
        const current = req;
        const mayRetry = init.retryStaleConnection === true && !fresh;
        if (mayRetry) {
          current.once('socket', (socket) => {
            const onData = () => {
              answered = true;
            };
            stopWatching = () => socket.removeListener('data', onData);
            socket.on('data', onData);
            current.once('close', stopWatching);
          });
        }
        current.on('error', (error: NodeJS.ErrnoException) => {
          if (res) return; // after the answer, failures reach the body
          if (mayRetry && !abortReason && current.reusedSocket && !answered && STALE_CONNECTION_CODES.has(error.code ?? '')) {
            return send(true);
          }
          done();
          reject(abortReason ?? new TypeError('fetch failed', { cause: error }));
        });
        current.end(body);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      send(false);
    });
  }

  /**
   * `request`, or with `fresh` over a one-off connection of its own (Node's
   * `agent: false`: never a pooled socket, closed after the answer), resolved
   * through the same checked lookup.
   */
  private open(url: URL, options: RequestOptions, fresh: boolean, onResponse?: (res: IncomingMessage) => void): ClientRequest {
    try {
      // Named after the host, so the refusal reads "<host> must not point at …".
      assertCallableUrl(url, url.host, this.allowPrivate);
    } catch (error) {
      throw blocked(error instanceof ProblemError ? (error.detail ?? error.message) : String(error));
    }
    const via: RequestOptions = fresh ? { agent: false, lookup: this.lookup } : { agent: this.agent };
    return request(url, { ...options, ...via }, onResponse);
  }
}

const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/** What `exchange` read: the whole answer, or that it was larger than allowed (`declared`: its Content-Length, when that said so). */
export type Exchanged =
  { kind: 'answer'; status: number; headers: IncomingHttpHeaders; body: Buffer } | { kind: 'oversize'; declared: number | null };

function assertStatus(status: number): void {
  if (status < 200 || status > 599) throw new Error(`invalid HTTP status ${status}`);
}

/** Reads an answer whole, up to `maxBytes`; settles exactly once. */
function readWhole(
  answer: IncomingMessage,
  maxBytes: number,
  abortedWith: () => unknown,
  resolve: (value: Exchanged) => void,
  reject: (error: unknown) => void,
): void {
  const status = answer.statusCode ?? 0;
  assertStatus(status);
  const declared = Number(answer.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    answer.destroy();
    return resolve({ kind: 'oversize', declared });
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  let settled = false;
  const fail = (error: unknown) => {
    if (settled) return;
    settled = true;
    reject(abortedWith() ?? new TypeError('fetch failed', { cause: error }));
  };
  answer.on('data', (chunk: Buffer) => {
    if (settled) return;
    bytes += chunk.length;
    if (bytes > maxBytes) {
      settled = true;
      answer.destroy();
      return resolve({ kind: 'oversize', declared: null });
    }
    chunks.push(chunk);
  });
  answer.once('end', () => {
    if (settled) return;
    settled = true;
    resolve({ kind: 'answer', status, headers: answer.headers, body: Buffer.concat(chunks, bytes) });
  });
  answer.on('error', fail); // not once: a second error after the first must not go unhandled
  answer.once('close', () => fail(Object.assign(new Error('the connection closed before the answer ended'), { code: 'ECONNRESET' })));
}

function toResponse(res: IncomingMessage): Response {
  const status = res.statusCode ?? 0;
  assertStatus(status);
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    try {
      headers.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
    } catch {
      // a header fetch would not accept either: leave it out
    }
  }
  if (NULL_BODY_STATUSES.has(status)) {
    res.resume();
    return new Response(null, { status, headers });
  }
  return new Response(Readable.toWeb(res), { status, headers });
}

/** Registered once, in the core: every area gets the same agent. */
@Global()
@Module({ providers: [OutboundHttp], exports: [OutboundHttp] })
export class OutboundHttpModule {}
