import Fastify from 'fastify';
import request from 'supertest';
import { TestEnvironment } from '../test/support/harness';
import { TestIdentityProvider } from '../test/support/identity-provider';
import { login } from '../test/support/users';
import { load, LoadResult } from './support/load';
import { formatProfile, profileThisProcess } from './support/profile';
import { ratio, writeResult } from './support/results';

/**
 * HTTP through the full stack (JWT verification, session check, rate limiter,
 * PostgreSQL) against a bare Fastify server answering the same JSON on the
 * same machine. Both servers run in this process (the service as the api role
 * with LOG_LEVEL=warn); autocannon runs in a child process, so the load
 * generator never shares an event loop with the server it measures. Each
 * baseline row runs right before its service row, so drift in the machine's
 * load hits both alike.
 *   npm run bench:http            (BENCH_DURATION seconds per row, default 5)
 *   BENCH_PROFILE=1 npm run bench:http   also profiles the service at 50 connections
 */
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
/** The latency-against-load curve of GET /v1/me (the plot in docs/performance.md). */
const CURVE_LEVELS = (process.env.BENCH_HTTP_LEVELS ?? '1,10,25,50,100,200').split(',').map(Number);
/** Other routes, measured at these levels only. */
const OTHER_LEVELS = [50, 200];

interface Row {
  target: string;
  server: 'bare' | 'service';
  path: string;
  connections: number;
  requestsPerSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  non2xx: number;
  errors: number;
  ratio: number;
}

it('measures authenticated user API reads against a bare Fastify baseline', async () => {
  const idp = await TestIdentityProvider.start();
  // Limits far above what the load can reach: this measures the stack, not the limiter's refusals.
  const env = await TestEnvironment.create({
    ...idp.env,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_ENTERPRISE_PER_MINUTE: '10000000',
    RATE_LIMIT_ENTERPRISE_PER_DAY: '1000000000',
  });
  const { url } = await env.startApi({ env: { LOG_LEVEL: 'warn' } });
  const baseline = Fastify({ logger: false });
  try {
    const user = await login(url, idp, { sub: 'uid-bench-http', name: 'Bench', email: 'bench@example.com' });
    await request(url)
      .patch(`/v1/operator/users/${user.id}`)
      .set('authorization', 'Bearer operator-token-for-tests-only')
      .send({ tier: 'enterprise' })
      .expect(200);
    for (let i = 0; i < 20; i += 1)
      await request(url)
        .post('/v1/contacts')
        .set(user.auth)
        .send({ name: `Contact ${i}` })
        .expect(201);
    const me = (await request(url).get('/v1/me').set(user.auth).expect(200)).body as unknown;
    const contacts = (await request(url).get('/v1/contacts?limit=20').set(user.auth).expect(200)).body as unknown;
    const live = (await request(url).get('/health/live').expect(200)).body as unknown;
    baseline.get('/v1/me', async () => me);
    baseline.get('/v1/contacts', async () => contacts);
    baseline.get('/health/live', async () => live);
    await baseline.listen({ port: 0, host: '127.0.0.1' });
    const baseUrl = `http://127.0.0.1:${(baseline.server.address() as { port: number }).port}`;

    const rows: Row[] = [];
    const toRow = (server: Row['server'], path: string, connections: number, r: LoadResult): Row => ({
      target: `${server === 'bare' ? 'bare Fastify' : 'service'} GET ${path}`,
      server,
      path,
      connections,
      requestsPerSecond: Math.round(r.requestsPerSecond),
      p50Ms: r.latency.p50,
      p90Ms: r.latency.p90,
      p99Ms: r.latency.p99,
      maxMs: r.latency.max,
      non2xx: r.non2xx,
      errors: r.errors + r.timeouts,
      ratio: 1,
    });
    const measure = async (path: string, connections: number, auth: boolean) => {
      const bare = toRow('bare', path, connections, await load(`${baseUrl}${path}`, connections, DURATION));
      const full = toRow('service', path, connections, await load(`${url}${path}`, connections, DURATION, auth ? user.auth : {}));
      full.ratio = ratio(full.requestsPerSecond, bare.requestsPerSecond);
      rows.push(bare, full);
      console.log(
        `${path} c=${connections}: bare ${bare.requestsPerSecond}/s p99 ${bare.p99Ms} ms; service ${full.requestsPerSecond}/s p99 ${full.p99Ms} ms`,
      );
    };

    // Warm both servers up (JIT, pools, caches); not recorded.
    await load(`${baseUrl}/v1/me`, 50, 2);
    await load(`${url}/v1/me`, 50, 2, user.auth);

    for (const connections of CURVE_LEVELS) await measure('/v1/me', connections, true);
    for (const connections of OTHER_LEVELS) await measure('/v1/contacts?limit=20', connections, true);
    await measure('/health/live', 50, false);

    const notes: string[] = [];
    if (process.env.BENCH_PROFILE === '1') {
      const { summary } = await profileThisProcess('http-me-50', () => load(`${url}/v1/me`, 50, DURATION, user.auth));
      notes.push(formatProfile('CPU profile of the service process, GET /v1/me at 50 connections', summary));
    }

    const me50 = rows.find((r) => r.server === 'service' && r.path === '/v1/me' && r.connections === 50);
    const curve = (server: Row['server']) => {
      const points = rows.filter((r) => r.server === server && r.path === '/v1/me');
      return {
        connections: points.map((r) => r.connections),
        p50Ms: points.map((r) => r.p50Ms),
        p99Ms: points.map((r) => r.p99Ms),
        requestsPerSecond: points.map((r) => r.requestsPerSecond),
      };
    };
    writeResult({
      bench: 'http',
      title: 'HTTP: authenticated user API reads',
      command: 'npm run bench:http',
      baseline: 'bare Fastify in the same process answering the same JSON body, measured right before each service row',
      params: { durationSeconds: DURATION, curveLevels: CURVE_LEVELS, otherLevels: OTHER_LEVELS, serviceLogLevel: 'warn' },
      rows,
      tables: [
        {
          columns: ['target', 'connections', 'req/s', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors', 'ratio to bare'],
          rows: rows.map((r) => [r.target, r.connections, r.requestsPerSecond, r.p50Ms, r.p99Ms, r.maxMs, r.non2xx, r.errors, r.ratio]),
        },
      ],
      targets: me50
        ? [
            {
              target: 'authenticated GET /v1/me ≥ 40 % of bare Fastify req/s at 50 connections',
              measured: `${(me50.ratio * 100).toFixed(1)} % (${me50.requestsPerSecond} vs ${rows.find((r) => r.server === 'bare' && r.path === '/v1/me' && r.connections === 50)?.requestsPerSecond} req/s)`,
              met: me50.ratio >= 0.4,
            },
            { target: 'authenticated GET /v1/me p99 < 20 ms at 50 connections', measured: `p99 ${me50.p99Ms} ms`, met: me50.p99Ms < 20 },
          ]
        : [],
      extra: { meCurve: { bare: curve('bare'), service: curve('service') } },
      notes,
    });
    expect(rows.every((r) => r.non2xx === 0 && r.errors === 0)).toBe(true);
  } finally {
    await baseline.close();
    await env.close();
    await idp.close();
  }
});
