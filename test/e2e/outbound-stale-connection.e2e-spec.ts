import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { FREE_SOCKET_TIMEOUT_MS, OutboundHttp } from '../../src/common/http/outbound-http';
import type { DnsLookup } from '../../src/common/http/target-policy';
import { callRuntime } from '../../src/modules/runtime-bridge/runtime-caller';
import { assertTestCaTrusted, testCertificate } from '../support/test-ca';

/**
 * The keep-alive race against a real local HTTPS server: the server closes a
 * pooled connection just as the service reuses it. Each request is handled by
 * `plan` with its number on its connection (1 for the first) and the number of
 * its connection, so a test scripts "the second request on a connection is
 * dropped" and counts connections.
 */
type Plan = (nth: number, req: IncomingMessage, res: ServerResponse, connection: number) => void;

interface LocalRuntime {
  url: string;
  port: number;
  server: Server;
  connections: number;
  requests: number;
}

const answer = (res: ServerResponse, body: unknown = { status: 'ok', data: { n: 1 }, ttl: 30 }) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** Drops the connection without a byte of answer (the server closing its idle socket as the request arrives). */
const drop = (req: IncomingMessage) => req.socket.destroy();

/** Answers the first request on each connection; drops any later one. */
const dropReused: Plan = (nth, req, res) => (nth === 1 ? answer(res) : drop(req));

describe('OutboundHttp: a stale keep-alive connection', () => {
  const started: LocalRuntime[] = [];
  const clients: OutboundHttp[] = [];
  let tls: { key: string; cert: string };

  beforeAll(() => {
    assertTestCaTrusted();
    tls = testCertificate('trusted');
  });

  afterEach(async () => {
    for (const client of clients.splice(0)) client.agent.destroy();
    await Promise.all(
      started.splice(0).map(
        (runtime) =>
          new Promise<void>((resolve) => {
            runtime.server.closeAllConnections();
            runtime.server.close(() => resolve());
          }),
      ),
    );
  });

  async function serve(plan: Plan, keepAliveTimeoutMs = 5_000): Promise<LocalRuntime> {
    const perSocket = new WeakMap<Socket, { connection: number; requests: number }>();
    const runtime = { connections: 0, requests: 0 } as LocalRuntime;
    runtime.server = createServer(tls, (req, res) => {
      const seen = perSocket.get(req.socket)!;
      seen.requests += 1;
      runtime.requests += 1;
      // The body is read first, as a runtime would, so a drop is a drop and not a half-read request.
      req.resume();
      req.once('end', () => plan(seen.requests, req, res, seen.connection));
    });
    runtime.server.keepAliveTimeout = keepAliveTimeoutMs;
    runtime.server.on('secureConnection', (socket: Socket) => {
      runtime.connections += 1;
      perSocket.set(socket, { connection: runtime.connections, requests: 0 });
    });
    await new Promise<void>((resolve) => runtime.server.listen(0, '127.0.0.1', resolve));
    runtime.port = (runtime.server.address() as AddressInfo).port;
    runtime.url = `https://127.0.0.1:${runtime.port}`;
    started.push(runtime);
    return runtime;
  }

  function client(resolve?: DnsLookup): OutboundHttp {
    const http = new OutboundHttp({ allowPrivateTargets: true }, resolve);
    clients.push(http);
    return http;
  }

  /** One call read to the end, after which its connection is back in the pool, free for the next call. */
  async function warm(http: OutboundHttp, url: string): Promise<void> {
    const response = await http.fetch(url);
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    await new Promise((resolve) => setImmediate(resolve));
    expect(freeSockets(http)).toBe(1);
  }

  const freeSockets = (http: OutboundHttp) => Object.values(http.agent.freeSockets).reduce((n, list) => n + (list?.length ?? 0), 0);

  const stateCall = (retryStaleConnection?: boolean) => ({
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ capability: 'weather', mode: 'state', params: {}, context: { userId: 'u1' } }),
    retryStaleConnection,
  });

  it('retries a state call once on a new connection when the reused one was closed before answering', async () => {
    const runtime = await serve(dropReused);
    const http = client();
    await warm(http, `${runtime.url}/warm`);

    const result = await callRuntime(http, `${runtime.url}/capabilities/weather/execute`, stateCall(true), {
      timeoutMs: 5_000,
      maxBytes: 10_000,
    });

    expect(result).toMatchObject({ kind: 'response', status: 200, jsonOk: true, json: { status: 'ok', data: { n: 1 } } });
    // The warm-up, the dropped request on the reused connection, and the retry on a second connection.
    expect(runtime.requests).toBe(3);
    expect(runtime.connections).toBe(2);
  });

  it('resends the same body on the retry', async () => {
    const bodies: string[] = [];
    const runtime = await serve(dropReused);
    runtime.server.prependListener('request', (req: IncomingMessage) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => bodies.push(Buffer.concat(chunks).toString('utf8')));
    });
    const http = client();
    await warm(http, `${runtime.url}/warm`);

    const response = await http.fetch(`${runtime.url}/execute`, { method: 'POST', body: '{"a":1}', retryStaleConnection: true });

    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect(bodies).toEqual(['', '{"a":1}', '{"a":1}']);
  });

  it('resolves the retry connection through the checked lookup too', async () => {
    const runtime = await serve(dropReused);
    let lookups = 0;
    const http = client((_host, _options, callback) => {
      lookups += 1;
      callback(null, [{ address: '127.0.0.1', family: 4 }]);
    });
    const url = `https://localhost:${runtime.port}`;
    await warm(http, `${url}/warm`);

    const response = await http.fetch(`${url}/execute`, { retryStaleConnection: true });

    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect(runtime.connections).toBe(2);
    expect(lookups).toBe(2);
  });

  it('fails as before when the caller did not opt in', async () => {
    const runtime = await serve(dropReused);
    const http = client();
    await warm(http, `${runtime.url}/warm`);

    await expect(http.fetch(`${runtime.url}/execute`, { method: 'POST', body: '{}' })).rejects.toMatchObject({
      name: 'TypeError',
      cause: { code: 'ECONNRESET' },
    });
    expect(runtime.connections).toBe(1);

    // The same through the runtime caller, on a connection of its own.
    await warm(http, `${runtime.url}/warm`);
    const dropped = await callRuntime(http, `${runtime.url}/capabilities/weather/execute`, stateCall(), {
      timeoutMs: 5_000,
      maxBytes: 10_000,
    });
    expect(dropped).toMatchObject({ kind: 'unavailable' });
    expect(runtime.connections).toBe(2);
  });

  it('does not retry a failure on a fresh connection', async () => {
    const runtime = await serve((_nth, req) => drop(req));
    const http = client();

    await expect(http.fetch(`${runtime.url}/execute`, { method: 'POST', body: '{}', retryStaleConnection: true })).rejects.toMatchObject({
      name: 'TypeError',
      cause: { code: 'ECONNRESET' },
    });
    expect(runtime.requests).toBe(1);
    expect(runtime.connections).toBe(1);
  });

  it('does not retry once the response headers arrived', async () => {
    const runtime = await serve((nth, req, res) => {
      if (nth === 1) return answer(res);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      setTimeout(() => req.socket.destroy(), 20);
    });
    const http = client();
    await warm(http, `${runtime.url}/warm`);

    const result = await callRuntime(http, `${runtime.url}/capabilities/weather/execute`, stateCall(true), {
      timeoutMs: 5_000,
      maxBytes: 10_000,
    });

    expect(result).toMatchObject({ kind: 'unavailable' });
    expect(runtime.requests).toBe(2);
    expect(runtime.connections).toBe(1);
  });

  it('does not retry once part of the status line arrived', async () => {
    const runtime = await serve((nth, req, res) => {
      if (nth === 1) return answer(res);
      req.socket.write('HTTP/1.1 200 OK\r\ncontent-type: appl');
      setTimeout(() => req.socket.destroy(), 20);
    });
    const http = client();
    await warm(http, `${runtime.url}/warm`);

    await expect(http.fetch(`${runtime.url}/execute`, { retryStaleConnection: true })).rejects.toMatchObject({
      name: 'TypeError',
      cause: { code: 'ECONNRESET' },
    });
    expect(runtime.requests).toBe(2);
    expect(runtime.connections).toBe(1);
  });

  it('keeps the caller’s time limit over both attempts', async () => {
    // The retry reaches a runtime that never answers: the one timeout of the call ends it.
    const runtime = await serve((nth, req, res, connection) => {
      if (connection > 1) return; // never answered
      if (nth === 1) answer(res);
      else drop(req);
    });
    const http = client();
    await warm(http, `${runtime.url}/warm`);
    const began = Date.now();

    const result = await callRuntime(http, `${runtime.url}/capabilities/weather/execute`, stateCall(true), {
      timeoutMs: 600,
      maxBytes: 10_000,
    });

    expect(result).toMatchObject({ kind: 'timeout' });
    expect(Date.now() - began).toBeLessThan(1_500);
    expect(runtime.connections).toBe(2);
  });

  it('does not retry when the signal was aborted', async () => {
    const runtime = await serve(dropReused);
    const http = client();
    await warm(http, `${runtime.url}/warm`);
    const controller = new AbortController();
    runtime.server.prependListener('request', () => controller.abort(new Error('caller gave up')));

    await expect(http.fetch(`${runtime.url}/execute`, { signal: controller.signal, retryStaleConnection: true })).rejects.toThrow(
      'caller gave up',
    );
    expect(runtime.connections).toBe(1);
  });

  it('drops an idle pooled connection before the server’s announced keep-alive timeout', async () => {
    // Node's server announces `Keep-Alive: timeout=2`; the agent keeps the socket 1 s less.
    const runtime = await serve((_nth, _req, res) => answer(res), 2_000);
    const http = client();
    await warm(http, `${runtime.url}/warm`);

    await new Promise((resolve) => setTimeout(resolve, 1_400));

    expect(freeSockets(http)).toBe(0);
    const response = await http.fetch(`${runtime.url}/again`);
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect(runtime.connections).toBe(2);
  });

  it('leaves a busy connection alone past the idle timeout (slow answers, quiet streams)', async () => {
    const runtime = await serve((_nth, _req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: heartbeat\n\n');
        setTimeout(() => res.end('event: data\n\n'), FREE_SOCKET_TIMEOUT_MS + 300);
      }, FREE_SOCKET_TIMEOUT_MS + 300);
    });
    const http = client();

    const response = await http.fetch(`${runtime.url}/stream`);

    expect(response.status).toBe(200);
    expect(await response.text()).toBe('event: heartbeat\n\nevent: data\n\n');
  }, 20_000);
});
