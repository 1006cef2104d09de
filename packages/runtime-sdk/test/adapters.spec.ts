import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify, { FastifyInstance } from 'fastify';
import { CallContext, defineRuntime, Runtime } from '../src';
import { AnswerBody, RuntimeTestKit } from '../src/testing';
import { bank } from './bank';
import { serve } from './serve';

/**
 * The same runtime behind Fastify (a plugin under a prefix) and Express (a
 * middleware under a mount path), each over a real loopback port: the routes
 * the service calls, the runtime's answers, and the request body handed to
 * the handler as the exact bytes sent.
 */
describe('adapters', () => {
  let kit: RuntimeTestKit;
  let runtime: Runtime<typeof bank>;
  let seen: CallContext[];
  // Whitespace and key order a parse-and-serialise round trip would lose.
  const rawBody = (kitBody: Record<string, unknown>) =>
    `{ "capability":"balance",\n  "mode": "state", "params": ${JSON.stringify(kitBody.params)} ,"context":{} }`;

  const callState = async (base: string, params: Record<string, unknown> = { account: 'checking' }) => {
    const body = rawBody(kit.body('balance', 'state', { params }));
    const response = await fetch(`${base}/capabilities/balance/execute`, { method: 'POST', headers: await kit.headers('state'), body });
    return { status: response.status, body: (await response.json()) as AnswerBody & { misconfigured?: string }, sent: body };
  };

  beforeAll(async () => {
    kit = await RuntimeTestKit.create();
    runtime = defineRuntime({
      descriptor: bank,
      serviceUrl: kit.serviceUrl,
      appId: kit.appId,
      keys: kit.jwks,
      handlers: {
        balance: async (_params, context) => {
          seen.push(context);
          return { data: { available: 42, currency: 'EUR' } };
        },
        transfer: async () => ({ result: { transferId: 'tr_1', state: 'completed' as const }, message: 'Sent.' }),
        transactions: async () => ({ items: [] }),
        ticker: (stream) => stream.send({ rate: 1.1 }),
      },
    });
  });
  beforeEach(() => {
    seen = [];
  });

  describe('Fastify plugin', () => {
    let app: FastifyInstance;
    let base: string;

    beforeAll(async () => {
      app = Fastify();
      // The application's own JSON routes keep Fastify's parser: the plugin's raw-body parser is encapsulated.
      app.post('/echo', async (request) => ({ parsed: request.body }));
      await app.register(runtime.fastify(), { prefix: '/runtime' });
      await app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    });
    afterAll(() => app.close());

    it('serves execute under its prefix with the raw body bytes', async () => {
      const res = await callState(`${base}/runtime`);
      expect(res).toMatchObject({ status: 200, body: { status: 'ok', data: { available: 42 } } });
      expect(seen[0].rawBody.toString('utf8')).toBe(res.sent);
    });

    it('answers the runtime error envelope for bad params and bad tokens', async () => {
      expect((await callState(`${base}/runtime`, { account: 'x' })).body.error).toMatchObject({
        code: 'INVALID_PARAMS',
        field: 'params.account',
      });
      const forged = await fetch(`${base}/runtime/capabilities/balance/execute`, {
        method: 'POST',
        headers: await kit.headers('state', { token: await kit.forgedToken({ requestId: 'req_f' }), requestId: 'req_f' }),
        body: JSON.stringify(kit.body('balance', 'state', { params: { account: 'checking' } })),
      });
      expect(forged.status).toBe(401);
      expect(await forged.json()).toMatchObject({ error: { code: 'AUTH_INVALID' } });
    });

    it('streams realtime events through the hijacked reply', async () => {
      const controller = new AbortController();
      const response = await fetch(`${base}/runtime/capabilities/ticker/stream`, {
        headers: await kit.headers('realtime'),
        signal: controller.signal,
      });
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = response.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
      let text = '';
      while (!text.includes('event: data')) text += new TextDecoder().decode((await reader.read()).value);
      controller.abort();
      expect(text).toContain('data: {"rate":1.1}');
    });

    it('leaves the rest of the application alone', async () => {
      const res = await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
      expect(await res.json()).toEqual({ parsed: { a: 1 } });
    });
  });

  describe('Express middleware', () => {
    let server: { url: string; close: () => Promise<void> };

    beforeAll(async () => {
      const app = express();
      app.use('/runtime', runtime.express());
      app.use(express.json());
      app.post('/echo', (req, res) => {
        res.json({ parsed: req.body as unknown });
      });
      // Mounted behind a JSON parser: the bytes are gone, and the runtime says so instead of guessing.
      app.use('/late', runtime.express());
      app.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
        res.status(500).json({ misconfigured: error.message });
      });
      server = await serve(app);
    });
    afterAll(() => server.close());

    it('serves execute under its mount path with the raw body bytes', async () => {
      const res = await callState(`${server.url}/runtime`);
      expect(res).toMatchObject({ status: 200, body: { status: 'ok', data: { available: 42 } } });
      expect(seen[0].rawBody.toString('utf8')).toBe(res.sent);
    });

    it('passes other routes on, and refuses to run behind a parser that consumed the body', async () => {
      const echo = await fetch(`${server.url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
      expect(await echo.json()).toEqual({ parsed: { a: 1 } });
      const late = await callState(`${server.url}/late`);
      expect(late.status).toBe(500);
      expect(late.body.misconfigured).toContain('mount runtime.express() before express.json()');
      expect(seen).toHaveLength(0);
    });

    it('answers an expired token with 401 AUTH_EXPIRED', async () => {
      const token = await kit.token({ requestId: 'req_e', issuedAt: new Date(Date.now() - 3_600_000) });
      const res = await fetch(`${server.url}/runtime/capabilities/balance/execute`, {
        method: 'POST',
        headers: await kit.headers('state', { token, requestId: 'req_e' }),
        body: JSON.stringify(kit.body('balance', 'state', { params: { account: 'checking' } })),
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: { code: 'AUTH_EXPIRED', retryable: true } });
    });
  });
});
