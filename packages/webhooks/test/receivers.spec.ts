import { once } from 'node:events';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import express from 'express';
import Fastify, { FastifyInstance } from 'fastify';
import { signWebhook, verifyWebhook, WebhookVerificationError } from '@soul-service/webhooks';
import { deliveryBody, SECRET } from './fixtures';

/**
 * Real receivers on 127.0.0.1, each getting a real signed POST, as a
 * provider would write them with the README's examples.
 */

interface Answer {
  status: number;
  body: { code?: string; type?: string };
}

/** What every receiver does with the outcome: 204 with the event type, or the error's status and code. */
function answerFor(verify: () => { type: string }): Answer {
  try {
    return { status: 200, body: { type: verify().type } };
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    return { status: error.status, body: { code: error.code } };
  }
}

async function post(url: string, body = deliveryBody(), secret = SECRET): Promise<Answer> {
  const headers = { 'content-type': 'application/json', ...signWebhook({ secret, payload: body }) };
  const response = await fetch(url, { method: 'POST', headers, body });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}

function reply(res: ServerResponse, answer: Answer): void {
  res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
}

describe('a node:http receiver', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });
  const start = async (handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>) => {
    const server = createServer((req, res) => void handler(req, res));
    servers.push(server);
    return listen(server);
  };

  it('verifies a real signed POST over the raw bytes', async () => {
    const url = await start(async (req, res) => {
      const raw = await readBody(req);
      reply(
        res,
        answerFor(() => verifyWebhook(raw, req.headers, SECRET)),
      );
    });
    await expect(post(url)).resolves.toEqual({ status: 200, body: { type: 'install.created' } });
    await expect(post(url, deliveryBody(), 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oDMfKQ9r8GKYo=')).resolves.toEqual({
      status: 401,
      body: { code: 'signature_mismatch' },
    });
  });

  it('behind a JSON middleware that re-serialises the body, gets payload_reserialized (500, so the service retries after the fix)', async () => {
    // A body-parsing layer that hands on a re-formatted copy, as pretty-printing and re-escaping parsers do.
    const reserialise = (raw: Buffer) => JSON.stringify(JSON.parse(raw.toString('utf8')), null, 2);
    const url = await start(async (req, res) => {
      const body = reserialise(await readBody(req));
      reply(
        res,
        answerFor(() => verifyWebhook(body, req.headers, SECRET)),
      );
    });
    await expect(post(url)).resolves.toEqual({ status: 500, body: { code: 'payload_reserialized' } });
  });

  it('behind a JSON middleware that hands on the parsed object, gets payload_not_raw', async () => {
    const url = await start(async (req, res) => {
      const parsed = JSON.parse((await readBody(req)).toString('utf8')) as unknown;
      reply(
        res,
        answerFor(() => verifyWebhook(parsed as string, req.headers, SECRET)),
      );
    });
    await expect(post(url)).resolves.toEqual({ status: 500, body: { code: 'payload_not_raw' } });
  });
});

describe('an Express receiver', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const app = express();
    app.post('/raw', express.raw({ type: 'application/json' }), (req, res) => {
      const answer = answerFor(() => verifyWebhook(req.body as Buffer, req.headers, SECRET));
      res.status(answer.status).json(answer.body);
    });
    app.post('/json', express.json(), (req, res) => {
      const answer = answerFor(() => verifyWebhook(req.body as Buffer, req.headers, SECRET));
      res.status(answer.status).json(answer.body);
    });
    server = createServer(app);
    base = (await listen(server)).replace(/\/hooks$/, '');
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it("verifies a real signed POST read with express.raw({ type: 'application/json' })", async () => {
    await expect(post(`${base}/raw`)).resolves.toEqual({ status: 200, body: { type: 'install.created' } });
  });

  it('with express.json() instead, answers payload_not_raw', async () => {
    await expect(post(`${base}/json`)).resolves.toEqual({ status: 500, body: { code: 'payload_not_raw' } });
  });
});

describe('a Fastify receiver', () => {
  let raw: FastifyInstance;
  let parsed: FastifyInstance;
  beforeAll(async () => {
    raw = Fastify();
    raw.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    parsed = Fastify();
    for (const app of [raw, parsed]) {
      app.post('/hooks', async (req, res) => {
        const answer = answerFor(() => verifyWebhook(req.body as Buffer, req.headers, SECRET));
        return res.status(answer.status).send(answer.body);
      });
    }
    await Promise.all([raw.listen({ port: 0, host: '127.0.0.1' }), parsed.listen({ port: 0, host: '127.0.0.1' })]);
  });
  afterAll(() => Promise.all([raw.close(), parsed.close()]));
  const url = (app: FastifyInstance) => `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/hooks`;

  it("verifies a real signed POST read with addContentTypeParser(…, { parseAs: 'buffer' })", async () => {
    await expect(post(url(raw))).resolves.toEqual({ status: 200, body: { type: 'install.created' } });
  });

  it('with the default JSON parser, answers payload_not_raw', async () => {
    await expect(post(url(parsed))).resolves.toEqual({ status: 500, body: { code: 'payload_not_raw' } });
  });
});

describe('a fetch-style handler (Next.js route handler, Workers)', () => {
  it('verifies await req.text() with req.headers (a WHATWG Headers)', async () => {
    const body = deliveryBody();
    const req = new Request('http://127.0.0.1/hooks', { method: 'POST', headers: signWebhook({ secret: SECRET, payload: body }), body });
    expect(verifyWebhook(await req.text(), req.headers, SECRET).type).toBe('install.created');
  });
});
