import { request as httpRequest } from 'node:http';
import { getQueueToken } from '@nestjs/bullmq';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Queue } from 'bullmq';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { QUEUES } from '../../src/infra/queue/queues';
import { factories } from '../support/factories';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { waitFor } from '../support/wait-for';

/**
 * The two process roles as operators run them: `dist/main.js` (api, or all)
 * and `dist/worker.js`, each a separate operating-system process.
 */
describe('api and worker roles', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await TestEnvironment.create();
  });
  afterAll(() => env.close());

  it('processes a job enqueued by the api role in a separately started worker process', async () => {
    const { app, url } = await env.startApi({ role: 'api' });
    const dataSource = app.get<DataSource>(getDataSourceToken());
    const queue = app.get<Queue>(getQueueToken(QUEUES.system));

    // Expired rows for the purge job to remove, and a recent one it must keep.
    const { id: old } = await factories(dataSource).event({ type: 'probe.old', createdAgo: '30 days', dispatchedAgo: '30 days' });
    const { id: recent } = await factories(dataSource).event({ type: 'probe.recent', dispatchedAgo: '0 seconds' });

    const res = await request(url).post('/v1/operator/system/purge').set('authorization', `Bearer ${OPERATOR_TOKEN}`).expect(202);
    const jobId: string = res.body.job_id;
    expect(await queue.getJobState(jobId)).toBe('waiting'); // the api role has no processor

    const worker = env.spawnRole('worker');
    await worker.waitForOutput(/worker started/);
    const job = await waitFor(
      async () => {
        const found = await queue.getJob(jobId);
        return found?.finishedOn ? found : undefined;
      },
      { what: 'the purge job to finish' },
    );
    expect(job.returnvalue).toMatchObject({ eventsPurged: 1 });
    const left = await dataSource.query(`SELECT id FROM events WHERE id = ANY($1)`, [[old, recent]]);
    expect(left).toEqual([{ id: recent }]);

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
  });

  it('starts with APP_ROLE=all and answers readiness within seconds', async () => {
    const all = env.spawnRole('main', { APP_ROLE: 'all', PORT: '0', LOG_LEVEL: 'info' });
    const [, port] = await all.waitForOutput(/api listening on http:\/\/[^:]+:(\d+)/);
    const res = await fetch(`http://127.0.0.1:${port}/health/ready`);
    expect(res.status).toBe(200);
    expect(all.output).toContain('processing queues: system');
    all.child.kill('SIGTERM');
    expect((await all.exited).code).toBe(0);
  });

  it('finishes an in-flight request after SIGTERM, then exits', async () => {
    const api = env.spawnRole('main', { APP_ROLE: 'api', PORT: '0', LOG_LEVEL: 'info' });
    const [, port] = await api.waitForOutput(/api listening on http:\/\/[^:]+:(\d+)/);

    // A request whose body is still arriving when the signal lands.
    const body = JSON.stringify({});
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: Number(port),
          method: 'POST',
          path: '/v1/operator/system/purge',
          headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'content-type': 'application/json', 'content-length': body.length },
        },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 1));
      setTimeout(() => {
        api.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(1)), 300);
      }, 100);
    });

    const { status, body: text } = await answer;
    expect(status).toBe(202);
    expect(JSON.parse(text)).toMatchObject({ status: 'queued' });
    expect(await api.exited).toEqual({ code: 0, signal: null });
    // New connections are refused once it has stopped.
    await expect(fetch(`http://127.0.0.1:${port}/health/live`)).rejects.toThrow();
  });

  it('refuses to start on an invalid variable and names it', async () => {
    const bad = env.spawnRole('main', { PORT: 'eighty', REDIS_URL: 'http://wrong' });
    const { code } = await bad.exited;
    expect(code).toBe(78);
    expect(bad.output).toContain('PORT must be a TCP port number (got "eighty")');
    expect(bad.output).toContain('REDIS_URL must use redis or rediss');
  });
});
