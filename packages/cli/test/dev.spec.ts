import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '@soul-service/cli';
import { terminal, type Terminal } from './terminal';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString()));
  });
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * The service's side of `soul dev`, scripted: each session request (`GET /v1/providers/dev/session`) is handed to
 * `onSession`, which writes events on the open stream (or refuses it); posted answers are recorded.
 */
class DevService {
  url = '';
  readonly sessions: Received[] = [];
  readonly posted: Array<{ callId: string; headers: IncomingMessage['headers']; body: Record<string, unknown> }> = [];
  onSession: (res: ServerResponse, index: number) => void = () => undefined;
  private readonly server = createServer((req, res) => void this.handle(req, res));

  async start(): Promise<void> {
    this.url = await listen(this.server);
  }

  close(): Promise<void> {
    return close(this.server);
  }

  /** Opens the stream of a session and says `ready`. */
  static ready(res: ServerResponse, sessionId: string, userId: string | null = 'usr_dev'): void {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    res.write(': ping\n\n');
    res.write(sse('ready', { session_id: sessionId, app_id: 'app_1', user_id: userId }));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const path = req.url ?? '';
    if (req.method === 'GET' && path.startsWith('/v1/providers/apps')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apps: [{ id: 'app_1', name: 'Acme' }] }));
      return;
    }
    if (req.method === 'GET' && path.startsWith('/v1/providers/dev/session')) {
      this.sessions.push({ method: req.method, url: path, headers: req.headers, body });
      this.onSession(res, this.sessions.length - 1);
      return;
    }
    const posted = /^\/v1\/providers\/dev\/session\/calls\/([^/]+)$/.exec(path);
    if (req.method === 'POST' && posted) {
      this.posted.push({ callId: decodeURIComponent(posted[1]), headers: req.headers, body: JSON.parse(body) as Record<string, unknown> });
      res.writeHead(204).end();
      return;
    }
    res.writeHead(404, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ title: 'Not Found', status: 404 }));
  }
}

/** The developer's runtime: answers each request with a JSON document after `delayMs` (per path), recording it. */
class Runtime {
  url = '';
  readonly received: Received[] = [];
  delayMs: Record<string, number> = {};
  private readonly server = createServer((req, res) => void this.handle(req, res));

  async start(): Promise<void> {
    this.url = await listen(this.server);
  }

  close(): Promise<void> {
    return close(this.server);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const path = req.url ?? '';
    this.received.push({ method: req.method ?? '', url: path, headers: req.headers, body });
    await new Promise((resolve) => setTimeout(resolve, this.delayMs[path] ?? 0));
    res
      .writeHead(200, { 'content-type': 'application/json', 'retry-after': '7', 'x-other': 'not passed on' })
      .end(JSON.stringify({ status: 'ok', data: { path, echoed: body } }));
  }
}

const call = (callId: string, capability: string, body: string) => ({
  call_id: callId,
  method: 'POST',
  path: `/capabilities/${capability}/execute`,
  headers: {
    Authorization: 'Bearer runtime-token',
    'Content-Type': 'application/json',
    'X-Service-Request-Id': `req_${callId}`,
    'X-Service-Livemode': 'false',
  },
  body,
});

describe('soul dev', () => {
  const service = new DevService();
  const runtime = new Runtime();
  let env: Record<string, string>;
  let shell: Terminal;

  beforeAll(async () => {
    await service.start();
    await runtime.start();
  });
  afterAll(async () => {
    await service.close();
    await runtime.close();
  });
  beforeEach(() => {
    service.sessions.length = 0;
    service.posted.length = 0;
    runtime.received.length = 0;
    runtime.delayMs = {};
    env = { SOUL_BASE_URL: service.url, SOUL_TOKEN: 'tok', SOUL_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'soul-dev-')), CI: 'true' };
    shell = terminal(env);
  });

  const until = async (check: () => boolean, what: string) => {
    const deadline = Date.now() + 10_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${shell.stdout()}${shell.stderr()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const items = () =>
    shell
      .stdout()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it('forwards each call with its method, headers and exact body, and posts the answer back; calls run side by side', async () => {
    const bodyA = '{"capability":"slow","mode":"state","params":{"account":"main"},  "spacing":"kept"}';
    const bodyB = '{"capability":"fast","mode":"state","params":{}}';
    runtime.delayMs = { '/capabilities/slow/execute': 600 };
    service.onSession = (res) => {
      DevService.ready(res, 'dses_1');
      res.write(sse('call', call('dcall_a', 'slow', bodyA)));
      res.write(sse('call', call('dcall_b', 'fast', bodyB)));
    };
    const running = run(['dev', '--url', `${runtime.url}/`], shell.io);
    await until(() => service.posted.length === 2, 'both answers posted');
    shell.abort();
    expect(await running).toBe(0);

    // The session: the token, the app (the token's only app), an event stream.
    expect(service.sessions).toHaveLength(1);
    expect(service.sessions[0].url).toBe('/v1/providers/dev/session?app_id=app_1');
    expect(service.sessions[0].headers).toMatchObject({ authorization: 'Bearer tok', accept: 'text/event-stream' });
    expect(service.sessions[0].headers['user-agent']).toMatch(/^soul-cli\//);

    // The runtime got the service's call as sent.
    const slow = runtime.received.find((r) => r.url === '/capabilities/slow/execute')!;
    expect(slow.method).toBe('POST');
    expect(slow.body).toBe(bodyA);
    expect(slow.headers).toMatchObject({
      authorization: 'Bearer runtime-token',
      'content-type': 'application/json',
      'x-service-request-id': 'req_dcall_a',
      'x-service-livemode': 'false',
    });

    // The slow call did not hold up the fast one: its answer was posted first.
    expect(service.posted.map((p) => p.callId)).toEqual(['dcall_b', 'dcall_a']);
    const answerA = service.posted.find((p) => p.callId === 'dcall_a')!;
    expect(answerA.headers.authorization).toBe('Bearer tok');
    expect(answerA.body).toEqual({
      status: 200,
      headers: { 'content-type': 'application/json', 'retry-after': '7' },
      body: JSON.stringify({ status: 'ok', data: { path: '/capabilities/slow/execute', echoed: bodyA } }),
    });

    const printed = items();
    expect(printed[0]).toEqual({ ready: true, session_id: 'dses_1', app_id: 'app_1', user_id: 'usr_dev', url: runtime.url });
    expect(printed.slice(1)).toEqual([
      { call_id: 'dcall_b', path: '/capabilities/fast/execute', status: 200, duration_ms: expect.any(Number) },
      { call_id: 'dcall_a', path: '/capabilities/slow/execute', status: 200, duration_ms: expect.any(Number) },
    ]);
  });

  it('posts a failure when the local runtime is not running', async () => {
    const closed = createServer();
    const url = await listen(closed);
    await close(closed);
    service.onSession = (res) => {
      DevService.ready(res, 'dses_2');
      res.write(sse('call', call('dcall_c', 'balance', '{}')));
    };
    const running = run(['dev', '--url', url, '--app', 'app_1'], shell.io);
    await until(() => service.posted.length === 1, 'the failure posted');
    shell.abort();
    expect(await running).toBe(0);
    expect(service.posted[0].callId).toBe('dcall_c');
    expect(service.posted[0].body).toEqual({ failure: 'unreachable', detail: expect.stringMatching(/refused/) });
    expect(items()[1]).toMatchObject({ call_id: 'dcall_c', failure: 'unreachable' });
  });

  it('reconnects when the stream drops and serves the next session’s calls', async () => {
    service.onSession = (res, index) => {
      DevService.ready(res, `dses_${index}`);
      if (index === 0) setTimeout(() => res.destroy(), 100);
      else res.write(sse('call', call('dcall_d', 'balance', '{"after":"reconnect"}')));
    };
    const running = run(['dev', '--url', runtime.url, '--app', 'app_1'], shell.io);
    await until(() => service.posted.length === 1, 'the call of the second session answered');
    shell.abort();
    expect(await running).toBe(0);
    expect(service.sessions).toHaveLength(2);
    expect(runtime.received.map((r) => r.body)).toEqual(['{"after":"reconnect"}']);
    expect(
      items()
        .filter((i) => i.ready)
        .map((i) => i.session_id),
    ).toEqual(['dses_0', 'dses_1']);
  });

  it('says once, on the terminal, that no call will arrive when the developer has no user account', async () => {
    // A person at a terminal (not CI): lines and notes, not JSON.
    const person = terminal({ ...env, CI: undefined }, true);
    service.onSession = (res, index) => {
      DevService.ready(res, `dses_${index}`, null);
      if (index === 0) setTimeout(() => res.end(), 100);
    };
    const running = run(['dev', '--url', runtime.url, '--app', 'app_1'], person.io);
    await until(() => person.stdout().includes('Reconnected'), 'the second session');
    person.abort();
    expect(await running).toBe(0);
    expect(person.stdout()).toMatch(/^Ready: test calls of app_1 go to http:\/\/127\.0\.0\.1:\d+ \(session dses_0\)/);
    expect(person.stderr().match(/verified email/g)).toHaveLength(1);
    expect(person.stderr()).toContain('the service ended the stream');
  });

  it('stops with exit 1 when the service refuses the session (401), without retrying', async () => {
    service.onSession = (res) => {
      res.writeHead(401, { 'content-type': 'application/problem+json', 'x-service-request-id': 'req_refused' }).end(
        JSON.stringify({
          type: 'about:blank',
          title: 'Unauthorized',
          status: 401,
          detail: 'The token has expired.',
          code: 'unauthorized',
        }),
      );
    };
    expect(await run(['dev', '--url', runtime.url, '--app', 'app_1'], shell.io)).toBe(1);
    expect(service.sessions).toHaveLength(1);
    expect(JSON.parse(shell.stderr())).toEqual({
      error: expect.objectContaining({ status: 401, detail: 'The token has expired.', request_id: 'req_refused' }),
    });
  });

  it('refuses a missing or non-HTTP --url (exit 2) before calling the service', async () => {
    expect(await run(['dev'], shell.io)).toBe(2);
    expect(JSON.parse(shell.stderr().split('\n')[0])).toMatchObject({
      error: { code: 'usage', hint: 'For example --url http://localhost:8787' },
    });
    expect(await run(['dev', '--url', 'ftp://localhost:8787'], terminal(env).io)).toBe(2);
    expect(await run(['dev', '--url', 'http://localhost:8787?x=1'], terminal(env).io)).toBe(2);
    expect(service.sessions).toHaveLength(0);
  });
});
