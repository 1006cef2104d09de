import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { freePort } from '../support/free-port';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { RedisProcess } from '../support/redis-process';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';
import { expectCleanError } from './envelopes';
import { MAX_ANSWER_MS, OutageLoad } from './outage-load';

/**
 * Issue 10, fault tests: Redis dies under load and comes back on the same
 * port. Readiness turns 503 and user API errors stay clean envelopes without
 * hanging; after the restart readiness is 200 again and requests succeed,
 * without restarting the api.
 */
jest.setTimeout(90_000);

describe('the api rides out a Redis restart', () => {
  let redis: RedisProcess;
  let idp: TestIdentityProvider;
  let env: TestEnvironment;
  let url: string;
  let user: LoggedInUser;
  const load = new OutageLoad();
  const { samples } = load;

  beforeAll(async () => {
    redis = new RedisProcess(await freePort());
    await redis.start();
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create(idp.env);
    const api = await env.startApi({ env: { REDIS_URL: redis.url } });
    url = api.url;
    user = await login(url, idp, { sub: 'uid-restarts', name: 'Restarts', email: 'restarts@example.com' });
    const dataSource: DataSource = api.app.get(getDataSourceToken());
    // The loop below sends far more than the free tier's requests a minute.
    await dataSource.query(`UPDATE users SET tier = 'pro' WHERE id = $1`, [user.id]);
  });
  afterAll(async () => {
    await load.stop();
    await env?.close();
    await idp?.close();
    await redis?.kill();
  });

  function startLoad(workers = 4): void {
    load.start(
      Array.from({ length: workers }, (_, i) => () => {
        const path = i % 2 === 0 ? '/v1/me' : '/health/ready';
        return load.hit(path, () => (i % 2 === 0 ? request(url).get(path).set(user.auth) : request(url).get(path)));
      }),
    );
  }

  const latest = (path: string, status: number, after: number) => load.seen(path, (s) => s === status, after);

  it('answers 503 on readiness and clean errors while Redis is down, and recovers when it is back', async () => {
    startLoad();
    await waitFor(() => (latest('/v1/me', 200, 0) && latest('/health/ready', 200, 0) ? true : undefined), {
      what: 'load answered normally',
      timeoutMs: 10_000,
    });

    await redis.kill();
    load.phase = 'down';
    const downFrom = samples.length;
    await waitFor(() => (latest('/health/ready', 503, downFrom) ? true : undefined), {
      what: 'readiness 503 after Redis died',
      timeoutMs: 10_000,
    });
    const ready = await request(url).get('/health/ready').timeout(MAX_ANSWER_MS);
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'unavailable', checks: { redis: 'down', database: 'up' } });
    // Keep the load on the dead Redis for a while.
    await new Promise((r) => setTimeout(r, 4_000));

    await redis.start();
    load.phase = 'restarted';
    const upFrom = samples.length;
    await waitFor(() => (latest('/health/ready', 200, upFrom) && latest('/v1/me', 200, upFrom) ? true : undefined), {
      what: 'readiness 200 and /v1/me 200 after Redis came back',
      timeoutMs: 20_000,
    });
    await load.stop();

    // Nothing hung and nothing broke the transport.
    const broken = samples.filter((s) => s.status === 0 || s.ms > MAX_ANSWER_MS);
    expect(broken.map((s) => `${s.phase} ${s.path} ${s.status} ${s.ms} ms ${s.error ?? ''}`)).toEqual([]);
    // Every answer around the outage is either a success or a clean envelope; never a 500 with a stack.
    const down = samples.filter((s) => s.phase === 'down');
    expect(down.length).toBeGreaterThan(10);
    for (const s of samples.filter((x) => x.phase !== 'before')) {
      if (s.path === '/health/ready') {
        expect([200, 503]).toContain(s.status);
        if (s.phase === 'down') expect(`${s.status} ${s.res?.body.checks.redis}`).toBe('503 down');
      } else if (s.status !== 200) {
        expectCleanError(s.res as request.Response, s.path, { allow5xx: [503] });
        expect(s.res?.text).not.toMatch(/\n\s+at /);
      }
    }
    // Before the outage everything succeeded.
    for (const s of samples.filter((x) => x.phase === 'before')) expect(`${s.path} ${s.status}`).toBe(`${s.path} 200`);

    // The same api instance serves normally now.
    await request(url).get('/health/ready').expect(200);
    const me = await request(url).get('/v1/me').set(user.auth).expect(200);
    expect(me.body).toMatchObject({ id: user.id });
    const statuses = (phaseName: string, path: string) =>
      [...new Set(samples.filter((s) => s.phase === phaseName && s.path === path).map((s) => s.status))].sort().join(',');
    console.log(
      `samples: ${samples.length}; down: /v1/me ${statuses('down', '/v1/me')}, /health/ready ${statuses('down', '/health/ready')}; ` +
        `slowest ${Math.max(...samples.map((s) => s.ms))} ms`,
    );
  });
});
