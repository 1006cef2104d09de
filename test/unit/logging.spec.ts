import { Logger } from '@nestjs/common';
import Fastify from 'fastify';
import pino from 'pino';
import { Writable } from 'node:stream';
import { AppLogger } from '../../src/infra/logging/app-logger';
import { registerRequestLog } from '../../src/infra/logging/request-log';
import { REDACTED_PATHS } from '../../src/infra/logging/root-logger';

function capture(level = 'debug') {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      callback();
    },
  });
  const root = pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, stream);
  return { root, lines, flush: () => new Promise((resolve) => setImmediate(resolve)) };
}

describe('AppLogger: what Nest passes becomes one pino line', () => {
  it('takes the context Nest appends, and the message', async () => {
    const { root, lines, flush } = capture();
    const logger = new Logger('Mailer');
    Logger.overrideLogger(new AppLogger(root));
    logger.log('sent');
    logger.warn({ to: 'a@example.com', password: 'hunter2' }, 'bounced');
    await flush();
    expect(lines[0]).toMatchObject({ level: 30, msg: 'sent', context: 'Mailer' });
    expect(lines[1]).toMatchObject({ level: 40, msg: 'bounced', context: 'Mailer', to: 'a@example.com', password: '[redacted]' });
  });

  it('logs an Error with its stack, and a stack string passed to error()', async () => {
    const { root, lines, flush } = capture();
    const app = new AppLogger(root);
    app.error(new Error('boom'), 'Errors');
    app.error('failed', 'Error: x\n    at f (file.js:1:1)', 'Jobs');
    await flush();
    expect(lines[0]).toMatchObject({ level: 50, msg: 'boom', context: 'Errors' });
    expect((lines[0].err as { stack: string }).stack).toContain('Error: boom');
    expect(lines[1]).toMatchObject({ level: 50, msg: 'failed', context: 'Jobs', stack: 'Error: x\n    at f (file.js:1:1)' });
  });

  it('leaves out further arguments, where a secret would sit beyond the redaction paths', async () => {
    const { root, lines, flush } = capture();
    new AppLogger(root).warn('retrying', { request: { headers: { authorization: 'Bearer sk_live_secret' } } }, 'Jobs');
    await flush();
    expect(lines[0]).toMatchObject({ level: 40, msg: 'retrying', context: 'Jobs' });
    expect(JSON.stringify(lines)).not.toContain('sk_live_secret');
  });

  it('writes nothing below the level, and maps verbose to trace', async () => {
    const { root, lines, flush } = capture('warn');
    const app = new AppLogger(root);
    app.log('quiet');
    app.debug('quiet');
    app.verbose('quiet');
    app.fatal('loud');
    await flush();
    expect(lines.map((l) => l.msg)).toEqual(['loud']);
  });
});

describe('request log', () => {
  async function serve(level = 'info') {
    const { root, lines, flush } = capture(level);
    const fastify = Fastify({ logger: false });
    registerRequestLog(fastify, root);
    fastify.get('/v1/ok', async () => ({ ok: true }));
    fastify.get('/v1/broken', async (_req, reply) => reply.status(502).send({ error: 'upstream' }));
    fastify.get('/health/live', async () => ({ status: 'ok' }));
    fastify.get('/health/ready', async (_req, reply) => reply.status(503).send({ status: 'unavailable' }));
    await fastify.ready();
    return { fastify, lines, flush };
  }

  it('writes one line per answer with id, method, status and time, the token parameter redacted', async () => {
    const { fastify, lines, flush } = await serve();
    const answer = await fastify.inject({ method: 'GET', url: '/v1/ok?token=secret-value&x=1' });
    await flush();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'request completed',
      req: { id: answer.headers['x-request-id'] ?? expect.any(String), method: 'GET', url: '/v1/ok?token=[redacted]&x=1' },
      res: { statusCode: 200 },
    });
    expect(typeof lines[0].responseTime).toBe('number');
    expect(JSON.stringify(lines)).not.toContain('secret-value');
  });

  it('logs a 5xx as an error even when info is off, and skips successful probes but not failing ones', async () => {
    const { fastify, lines, flush } = await serve('warn');
    await fastify.inject({ method: 'GET', url: '/v1/ok' });
    await fastify.inject({ method: 'GET', url: '/v1/broken' });
    await fastify.inject({ method: 'GET', url: '/health/live' });
    await fastify.inject({ method: 'GET', url: '/health/ready' });
    await flush();
    expect(lines.map((l) => [l.msg, (l.req as { url: string }).url, l.level])).toEqual([
      ['request errored', '/v1/broken', 50],
      ['request errored', '/health/ready', 50],
    ]);
  });

  it('does not log successful probes at info either', async () => {
    const { fastify, lines, flush } = await serve('info');
    await fastify.inject({ method: 'GET', url: '/health/live' });
    await flush();
    expect(lines).toHaveLength(0);
  });
});
