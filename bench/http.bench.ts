import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import request from 'supertest';
import { TestEnvironment } from '../test/support/harness';
import { TestIdentityProvider } from '../test/support/identity-provider';
import { login } from '../test/support/users';

/**
 * HTTP through the full stack (JWT verification, session check, rate limiter,
 * PostgreSQL) against a bare Fastify server answering the same JSON on the
 * same machine, at 50 and 200 connections. The service runs in this process
 * (api role, LOG_LEVEL=warn) like the baseline, so both share the CPU alike.
 *   npm run bench:http
 */
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const CONNECTION_LEVELS = [50, 200];

interface Row {
  target: string;
  connections: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  ratio?: number;
}

function load(url: string, connections: number, headers: Record<string, string> = {}): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections, duration: DURATION, headers }, (error: unknown, result) =>
      error ? reject(error instanceof Error ? error : new Error(JSON.stringify(error))) : resolve(result),
    );
  });
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
    baseline.get('/v1/me', async () => me);
    baseline.get('/v1/contacts', async () => contacts);
    await baseline.listen({ port: 0, host: '127.0.0.1' });
    const baseUrl = `http://127.0.0.1:${(baseline.server.address() as { port: number }).port}`;

    const rows: Row[] = [];
    for (const connections of CONNECTION_LEVELS) {
      for (const path of ['/v1/me', '/v1/contacts?limit=20']) {
        const bare = await load(`${baseUrl}${path}`, connections);
        const full = await load(`${url}${path}`, connections, user.auth);
        const row = (target: string, r: autocannon.Result): Row => ({
          target,
          connections,
          requestsPerSecond: Math.round(r.requests.average),
          p50Ms: r.latency.p50,
          p99Ms: r.latency.p99,
          non2xx: r.non2xx,
        });
        const baseRow = row(`bare Fastify GET ${path}`, bare);
        const fullRow = row(`service GET ${path}`, full);
        fullRow.ratio = Number((fullRow.requestsPerSecond / baseRow.requestsPerSecond).toFixed(3));
        baseRow.ratio = 1;
        rows.push(baseRow, fullRow);
      }
    }
    console.table(rows);
    mkdirSync(join(__dirname, 'results'), { recursive: true });
    writeFileSync(join(__dirname, 'results', 'http.json'), JSON.stringify({ duration: DURATION, node: process.version, rows }, null, 2));
    const table = [
      '| target | connections | req/s | p50 ms | p99 ms | non-2xx | ratio to bare |',
      '|---|---|---|---|---|---|---|',
      ...rows.map(
        (r) => `| ${r.target} | ${r.connections} | ${r.requestsPerSecond} | ${r.p50Ms} | ${r.p99Ms} | ${r.non2xx} | ${r.ratio} |`,
      ),
    ].join('\n');
    writeFileSync(join(__dirname, 'results', 'http.md'), `${table}\n`);
    expect(rows.every((r) => r.non2xx === 0)).toBe(true);
  } finally {
    await baseline.close();
    await env.close();
    await idp.close();
  }
});
