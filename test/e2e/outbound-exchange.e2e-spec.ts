import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { OutboundHttp } from '../../src/common/http/outbound-http';
import { callRuntime } from '../../src/modules/runtime-bridge/runtime-caller';
import { assertTestCaTrusted, testCertificate } from '../support/test-ca';

/**
 * `OutboundHttp.exchange` and the bridge's `callRuntime` on it, against a real
 * local HTTPS server answering each request with `handler`: an answer read
 * whole, the size cap declared and streamed, a body that stalls past the
 * timeout, a connection dropped in the middle of the body.
 */
type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A JSON answer with its Content-Length. */
const json = (res: ServerResponse, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
};

describe('OutboundHttp.exchange: an answer read whole, within its limits', () => {
  let tls: { key: string; cert: string };
  let server: Server | undefined;
  let http: OutboundHttp;

  beforeAll(() => {
    assertTestCaTrusted();
    tls = testCertificate('trusted');
  });

  beforeEach(() => {
    http = new OutboundHttp({ allowPrivateTargets: true });
  });

  const stop = async () => {
    const running = server;
    server = undefined;
    if (!running) return;
    running.closeAllConnections();
    await new Promise<void>((resolve) => running.close(() => resolve()));
  };

  afterEach(async () => {
    http.agent.destroy();
    await stop();
  });

  async function serve(handler: Handler): Promise<string> {
    server = createServer(tls, (req, res) => {
      req.resume();
      req.on('end', () => handler(req, res));
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `https://127.0.0.1:${(server.address() as AddressInfo).port}/capabilities/weather/execute`;
  }

  const post = (url: string, maxBytes = 1024, timeoutMs = 2_000) =>
    http.exchange(url, { method: 'POST', body: '{"params":{}}', signal: AbortSignal.timeout(timeoutMs), maxBytes });

  it('answers the status, the headers (names in lower case) and the whole body', async () => {
    const url = await serve((req, res) => json(res, { echo: req.headers['content-length'] }, { 'Retry-After': '7' }));
    const answer = await post(url);
    expect(answer).toMatchObject({ kind: 'answer', status: 200 });
    if (answer.kind !== 'answer') throw new Error('no answer');
    expect(answer.headers['retry-after']).toBe('7');
    // The request went out with its length, as fetch sends it.
    expect(JSON.parse(answer.body.toString('utf8'))).toEqual({ echo: String(Buffer.byteLength('{"params":{}}')) });
  });

  it('cuts off an answer whose Content-Length is over the cap, without reading it', async () => {
    const url = await serve((_req, res) => json(res, { data: 'x'.repeat(5_000) }));
    expect(await post(url, 1024)).toEqual({ kind: 'oversize', declared: expect.any(Number) });
  });

  it('cuts off a chunked answer once it grows over the cap', async () => {
    let written = 0;
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }); // no length: chunked
      const more = () => {
        if (res.destroyed || written > 1_000_000) return res.end();
        written += 512;
        res.write('x'.repeat(512), () => setImmediate(more));
      };
      more();
    });
    expect(await post(url, 4096)).toEqual({ kind: 'oversize', declared: null });
    // It stopped reading long before the server would have finished.
    expect(written).toBeLessThan(1_000_000);
  });

  it('rejects with the signal’s reason when the body stalls past the timeout', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status":"ok",'); // and never the rest
    });
    const failure = await post(url, 1024, 300).then(
      () => null,
      (error: Error) => error,
    );
    expect(failure?.name).toBe('TimeoutError');
  });

  it('rejects like fetch when the connection drops in the middle of the body', async () => {
    const url = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"status":"ok",', () => req.socket.destroy());
    });
    const failure = await post(url).then(
      () => null,
      (error: Error) => error,
    );
    expect(failure).toBeInstanceOf(TypeError);
    expect((failure!.cause as NodeJS.ErrnoException).code).toBe('ECONNRESET');
  });

  it('with timeoutMs, times out like a timeout signal and leaves no timer behind once answered', async () => {
    const ok = await serve((_req, res) => json(res, { ok: true }));
    const set = jest.spyOn(global, 'setTimeout');
    const clear = jest.spyOn(global, 'clearTimeout');
    try {
      const answer = await http.exchange(ok, { method: 'POST', body: '{}', timeoutMs: 60_000, maxBytes: 1024 });
      expect(answer.kind).toBe('answer');
      await new Promise((resolve) => setImmediate(resolve)); // the answer's 'close', which clears the timer
      const call = set.mock.calls.findIndex(([, ms]) => ms === 60_000);
      expect(call).toBeGreaterThanOrEqual(0);
      expect(clear).toHaveBeenCalledWith(set.mock.results[call].value);
    } finally {
      set.mockRestore();
      clear.mockRestore();
    }
    await stop();

    const stalled = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
    });
    const failure = await http.exchange(stalled, { method: 'POST', body: '{}', timeoutMs: 200, maxBytes: 1024 }).then(
      () => null,
      (error: Error) => error,
    );
    expect(failure?.name).toBe('TimeoutError');
  });

  it('gives callRuntime each outcome the bridge reports', async () => {
    const limits = { timeoutMs: 300, maxBytes: 2048 };
    const call = (url: string) => callRuntime(http, url, { method: 'POST', headers: {}, body: '{}' }, limits);

    const ok = await serve((_req, res) => json(res, { status: 'ok', data: { t: 1 } }, { 'retry-after': '3' }));
    expect(await call(ok)).toMatchObject({ kind: 'response', status: 200, jsonOk: true, json: { status: 'ok' }, retryAfterHeader: 3 });
    await stop();

    const big = await serve((_req, res) => json(res, { data: 'x'.repeat(4096) }));
    expect(await call(big)).toEqual({
      kind: 'oversize',
      detail: expect.stringMatching(/^the runtime answered \d+ bytes, more than the 2048/),
    });
    await stop();

    const stalled = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
    });
    expect(await call(stalled)).toMatchObject({ kind: 'timeout' });
  });
});
