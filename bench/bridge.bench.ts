import Redis from 'ioredis';
import request from 'supertest';
import { TestEnvironment } from '../test/support/harness';
import { TestIdentityProvider } from '../test/support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../test/support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, registerApp } from '../test/support/providers';
import { SmtpSink } from '../test/support/smtp-sink';
import { login } from '../test/support/users';
import { formatProfile, profileThisProcess } from './support/profile';
import { round, summarise, writeResult } from './support/results';

/**
 * Latency the runtime bridge adds: a `state` call through the service
 * (accept, resolve, invoke, deliver, with the cache emptied before each call
 * so every call reaches the runtime) against the same call made directly to
 * the runtime, in one run, sequentially. Also a cache hit for contrast.
 *   npm run bench:bridge   (BENCH_CALLS per row, default 120)
 */
/** The bridge's Free-tier limit is 100 state polls per minute per app, user and capability: spread calls over users. */
const USERS = 4;
const CALLS = Number(process.env.BENCH_CALLS ?? 120);
const WARMUP = 8;

async function time(times: number, call: () => Promise<void>, before?: () => Promise<void>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < times; i += 1) {
    if (before) await before();
    const started = process.hrtime.bigint();
    await call();
    samples.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return samples;
}

it('measures the runtime bridge against direct runtime calls', async () => {
  const smtp = await SmtpSink.start();
  const idp = await TestIdentityProvider.start();
  const runtime = await ProviderRuntime.start();
  const env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env, LOG_LEVEL: 'warn' });
  const { url } = await env.startApi();
  await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' } });
  const redis = new Redis(env.env.REDIS_URL);
  try {
    const developer = await onboardDeveloper(url, smtp, 'bench@example.com');
    const app = await registerApp(url, developer);
    const auth = { authorization: `Bearer ${await appToken(url, app)}` };
    const { packageId } = await publishPackage(url, auth, {
      appId: app.id,
      name: 'Bench Bank',
      slug: 'bench-bank',
      description: 'Bench',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      capabilities: goodPackageCapabilities(),
    });
    const installs: Array<{ userId: string; installId: string }> = [];
    for (let i = 0; i < USERS; i += 1) {
      const user = await login(url, idp, { sub: `uid-bench-${i}` });
      const install = await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201);
      installs.push({ userId: user.id, installId: install.body.id as string });
    }
    let turn = 0;
    const nextInstall = () => installs[turn++ % installs.length];

    const params = { account: 'checking' };
    // The app token (platform limits are raised in the test environment) names the install to act for.
    let current = installs[0];
    const throughService = async () => {
      await request(url)
        .post(`/v1/providers/packages/${packageId}/capabilities/balance/execute`)
        .set(auth)
        .send({ params, installId: current.installId })
        .expect(200);
    };
    const emptyCache = async () => {
      current = nextInstall();
      await redis.del(`${env.env.REDIS_PREFIX}:state:${current.installId}:balance`);
    };
    const sameInstall = async () => {
      current = nextInstall();
    };

    await time(WARMUP, throughService, emptyCache);
    // The direct baseline replays a call the service made to each install (its runtime token, request id and body), so
    // the runtime verifies a real token on both paths: the difference is the service's own work. Tokens live 5 minutes.
    const replays = new Map(
      runtime
        .requestsTo('/capabilities/balance/execute')
        .map((call) => [String((call.body as { context: { installId: string } }).context.installId), call]),
    );
    const forwarded = ['authorization', 'content-type', 'x-service-request-id', 'x-service-user-id', 'x-service-livemode'];
    const direct = async () => {
      const call = replays.get(nextInstall().installId)!;
      const res = await fetch(`${runtime.url}/capabilities/balance/execute`, {
        method: 'POST',
        headers: Object.fromEntries(forwarded.flatMap((name) => (call.headers[name] ? [[name, String(call.headers[name])]] : []))),
        body: call.rawBody,
      });
      if (res.status !== 200) throw new Error(`direct call answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    };
    await time(WARMUP, direct);
    const rows = {
      'direct runtime call': summarise(await time(CALLS, direct)),
      'through the service (cache emptied)': summarise(await time(CALLS, throughService, emptyCache)),
      'through the service (cache hit)': summarise(await time(CALLS, throughService, sameInstall)),
    };
    const notes: string[] = [];
    if (process.env.BENCH_PROFILE === '1') {
      // The service runs in this process: profile it over another set of cache-emptied calls (not in the table).
      const { summary } = await profileThisProcess('bridge-state-call', () => time(CALLS, throughService, emptyCache));
      notes.push(formatProfile(`CPU profile of the service process over ${CALLS} state calls through the bridge (cache emptied)`, summary));
    }
    const base = rows['direct runtime call'];
    const table = Object.entries(rows).map(([target, row]) => ({
      target,
      calls: row.count,
      p50Ms: row.p50Ms,
      p99Ms: row.p99Ms,
      maxMs: row.maxMs,
      addedP50Ms: round(row.p50Ms - base.p50Ms),
      addedP99Ms: round(row.p99Ms - base.p99Ms),
      p50Ratio: round(row.p50Ms / base.p50Ms),
      p99Ratio: round(row.p99Ms / base.p99Ms),
    }));
    console.table(table);
    const miss = table[1];
    writeResult({
      bench: 'bridge',
      title: 'Runtime bridge: a state call through the service',
      command: 'npm run bench:bridge',
      baseline: 'the same state call made directly to the same HTTPS runtime, in the same run',
      params: { calls: CALLS, users: USERS, warmup: WARMUP },
      rows: table,
      tables: [
        {
          caption: 'Sequential calls; the cache is emptied before each “cache emptied” call, so every one of them reaches the runtime.',
          columns: ['target', 'calls', 'p50 ms', 'p99 ms', 'max ms', 'added p50 ms', 'added p99 ms', 'p50 ratio', 'p99 ratio'],
          rows: table.map((r) => [r.target, r.calls, r.p50Ms, r.p99Ms, r.maxMs, r.addedP50Ms, r.addedP99Ms, r.p50Ratio, r.p99Ratio]),
        },
      ],
      targets: [
        {
          target: 'runtime bridge adds ≤ 2 ms p50',
          measured: `+${miss.addedP50Ms} ms (p50 ${miss.p50Ms} vs ${base.p50Ms} ms)`,
          met: miss.addedP50Ms <= 2,
        },
        {
          target: 'runtime bridge adds ≤ 5 ms p99',
          measured: `+${miss.addedP99Ms} ms (p99 ${miss.p99Ms} vs ${base.p99Ms} ms)`,
          met: miss.addedP99Ms <= 5,
        },
      ],
      notes,
    });
    expect(table).toHaveLength(3);
  } finally {
    redis.disconnect();
    await env.close();
    await runtime.close();
    await idp.close();
    await smtp.close();
  }
});
