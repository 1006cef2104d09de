import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { Client } from 'pg';
import request from 'supertest';
import { freePort } from '../test/support/free-port';
import { SpawnedRole, TestEnvironment } from '../test/support/harness';
import { TestIdentityProvider } from '../test/support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime, RecordedRequest } from '../test/support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, registerApp } from '../test/support/providers';
import { trustService } from '../test/support/service-keys';
import { SmtpSink } from '../test/support/smtp-sink';
import { login } from '../test/support/users';
import { formatProfile, summariseProfile, writeSummary } from './support/profile';
import { measureCpu, processGroups } from './support/process-cpu';
import { profileFile, spawnApi, stopGracefully, whenReady } from './support/roles';
import { round, summarise, writeResult } from './support/results';

/**
 * Latency the runtime bridge adds: a `state` call through the service
 * (accept, resolve, invoke, deliver) that misses the cache, so it reaches the
 * runtime, against the same call made directly to the same runtime, in one
 * run. The runtime answers `ttl: 0` in those rows: every cached copy is stale
 * at once, and the service calls the runtime and writes its answer to the
 * cache each time, as on any cache miss.
 *
 * The service runs as operators run it: `dist/main.js` as the api role and
 * `dist/worker.js` (its state poll tick pushed out of the run), each its own
 * operating-system process, `LOG_LEVEL=warn`. The provider runtime (a real
 * HTTPS server with the test CA's certificate, verifying every runtime token
 * against the spawned api's `/.well-known/jwks.json`) runs in this process,
 * as a provider's server would run beside the service. Both paths use the same
 * HTTP client: `fetch` (undici, keep-alive). The direct call replays the last
 * call the service made to the same install (its runtime token, request id and
 * body), so the runtime verifies a real token on both paths.
 *
 * Rows: sequential direct and through-service calls interleaved one by one
 * (direct, service, direct, service, …), each summarised on its own; then 50
 * concurrent callers (`BENCH_CONCURRENCY`) making `BENCH_CONCURRENT_CALLS`
 * calls direct and through the service, in alternating blocks; then cache
 * hits (the runtime answering `ttl: 300`). The app is moved to the Enterprise tier (10,000 state
 * calls per minute per app, user and capability) and the calls are spread
 * over one install per concurrent caller, so no call meets a limit.
 *   npm run bench:bridge   (BENCH_CALLS per sequential row, default 1000)
 *   BENCH_PROFILE=1 npm run bench:bridge   also CPU-profiles the api process over the whole run
 * Needs `npm run build` first (`npm run bench` does it).
 */
const CALLS = Number(process.env.BENCH_CALLS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const CONCURRENT_CALLS = Number(process.env.BENCH_CONCURRENT_CALLS ?? 2000);
/** The concurrent phase alternates direct and service blocks, so drift in the machine's load hits both alike. */
const CONCURRENT_BLOCKS = 4;
/** One install (one user) per concurrent caller: each caller's calls are the only ones on its install. */
const USERS = CONCURRENCY;
const WARMUP = 50;
const PROFILE = process.env.BENCH_PROFILE === '1';
const PROFILE_NAME = 'bridge-api';
const OPERATOR = { authorization: 'Bearer operator-token-for-tests-only' };
/** What the direct call replays of the service's call to the runtime. */
const FORWARDED = ['authorization', 'content-type', 'x-service-request-id', 'x-service-user-id', 'x-service-livemode'];

/**
 * Where a cache-missing call's time goes inside the service: the p50 of each
 * phase its trace recorded (accept, resolve, invoke, deliver; see
 * `PhaseClock`), and what is left of the client's p50 for everything before
 * the first phase and after the last (HTTP, the framework, the platform
 * guard, the answer's serialisation).
 */
async function phaseNote(databaseUrl: string, requestIds: string[], clientP50Ms: number): Promise<string> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ phases: Record<string, number> }>('SELECT phases FROM capability_executions WHERE id = ANY($1)', [
      requestIds,
    ]);
    const p50 = (name: string) => summarise(rows.map((r) => r.phases[name] ?? 0)).p50Ms;
    const phases = ['accept', 'resolve', 'invoke', 'deliver'].map((name) => ({ name, ms: p50(name) }));
    const inside = phases.reduce((sum, phase) => sum + phase.ms, 0);
    return `Phases of the sequential cache-missing calls (p50 over ${rows.length} traces, ms): ${phases
      .map((phase) => `${phase.name} ${phase.ms}`)
      .join(', ')}; the client's p50 less their sum (HTTP, framework, platform guard, answer): ${round(clientP50Ms - inside)}.`;
  } finally {
    await db.end();
  }
}

const elapsedMs = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e6;

it('measures the runtime bridge (api and worker in their own processes) against direct runtime calls', async () => {
  const smtp = await SmtpSink.start();
  const idp = await TestIdentityProvider.start();
  const runtime = await ProviderRuntime.start();
  const env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env, LOG_LEVEL: 'warn' });
  const roles: SpawnedRole[] = [];
  let forget: (() => void) | undefined;
  try {
    if (!process.env.NODE_EXTRA_CA_CERTS)
      throw new Error(
        'NODE_EXTRA_CA_CERTS is not set: the spawned service would not trust the test runtime (npm run bench:bridge sets it)',
      );
    const { role: api, url } = await spawnApi(env, 'the api', { enabled: PROFILE, name: PROFILE_NAME });
    const workerPort = await freePort();
    roles.push(api);
    const worker = env.spawnRole('worker', { WORKER_HEALTH_PORT: String(workerPort), RUNTIME_TICK_MS: '3600000', LOG_LEVEL: 'warn' });
    roles.push(worker);
    await whenReady(worker, `http://127.0.0.1:${workerPort}`, 'the worker');
    // The runtime verifies runtime tokens against the key set the spawned api publishes (as harness.startApi does in-process).
    forget = trustService(url);

    const developer = await onboardDeveloper(url, smtp, 'bench@example.com');
    const app = await registerApp(url, developer);
    await request(url).patch(`/v1/operator/apps/${app.id}`).set(OPERATOR).send({ tier: 'enterprise' }).expect(200);
    const token = await appToken(url, app);
    const auth = { authorization: `Bearer ${token}` };
    const { packageId } = await publishPackage(url, auth, {
      appId: app.id,
      name: 'Bench Bank',
      slug: 'bench-bank',
      description: 'Bench',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      capabilities: goodPackageCapabilities(),
    });
    const installs: string[] = [];
    for (let i = 0; i < USERS; i += 1) {
      const user = await login(url, idp, { sub: `uid-bench-${i}` });
      const install = await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201);
      installs.push(install.body.id as string);
    }

    const executeUrl = `${url}/v1/providers/packages/${packageId}/capabilities/balance/execute`;
    const serviceHeaders = { ...auth, 'content-type': 'application/json' };
    let wrongCacheState = 0;
    /**
     * One state call through the service: its latency, or why it failed (a failed call is counted in its row, not timed).
     * `hit`: the call must be served from the cache (else it must not be).
     */
    const throughService = async (installId: string, hit = false, requestIds?: string[]): Promise<number | string> => {
      const body = JSON.stringify({ params: { account: 'checking' }, installId });
      const started = process.hrtime.bigint();
      const res = await fetch(executeUrl, { method: 'POST', headers: serviceHeaders, body });
      const answer = (await res.json()) as { cached?: boolean; requestId?: string; data?: { cached?: boolean } };
      const ms = elapsedMs(started);
      if (res.status !== 200)
        return `the service answered ${res.status}: ${(answer as { detail?: string }).detail ?? JSON.stringify(answer)}`;
      if (requestIds && answer.requestId) requestIds.push(answer.requestId);
      const cached = answer.cached ?? answer.data?.cached;
      if (cached !== hit) wrongCacheState += 1;
      return ms;
    };
    // The latest call the service made to the runtime for each install: what the direct call replays (tokens live 5 minutes;
    // the service calls the runtime for every install all through the run, so the replayed token is always fresh).
    const latest = new Map<string, RecordedRequest>();
    let seen = 0;
    const recordServiceCalls = () => {
      for (; seen < runtime.requests.length; seen += 1) {
        const call = runtime.requests[seen];
        const installId = (call.body as { context?: { installId?: string } } | undefined)?.context?.installId;
        if (call.path === '/capabilities/balance/execute' && installId) latest.set(installId, call);
      }
      if (seen > 10_000) {
        runtime.clearRequests();
        seen = 0;
      }
    };
    const direct = async (installId: string): Promise<number | string> => {
      const call = latest.get(installId);
      if (!call) throw new Error(`no recorded service call for install ${installId} to replay`);
      const headers = Object.fromEntries(FORWARDED.flatMap((name) => (call.headers[name] ? [[name, String(call.headers[name])]] : [])));
      const started = process.hrtime.bigint();
      const res = await fetch(`${runtime.url}/capabilities/balance/execute`, { method: 'POST', headers, body: call.rawBody });
      const answer: unknown = await res.json();
      const ms = elapsedMs(started);
      if (res.status !== 200) return `the runtime answered the direct call ${res.status}: ${JSON.stringify(answer)}`;
      return ms;
    };

    /** Failed calls of each row, by reason. */
    const failures = new Map<string, Map<string, number>>();
    const record = (row: string, samples: number[], outcome: number | string) => {
      if (typeof outcome === 'number') return void samples.push(outcome);
      const reasons = failures.get(row) ?? new Map<string, number>();
      reasons.set(outcome, (reasons.get(outcome) ?? 0) + 1);
      failures.set(row, reasons);
    };
    const failed = (row: string) => [...(failures.get(row)?.values() ?? [])].reduce((a, b) => a + b, 0);

    // Every answer stale at once: each call through the service misses the cache and reaches the runtime.
    runtime.stateTtl = 0;
    // Warm-up (not recorded): every install through the service once (a token to replay for each), then both paths.
    for (const installId of installs) await throughService(installId);
    recordServiceCalls();
    for (let i = 0; i < WARMUP; i += 1) {
      const installId = installs[i % installs.length];
      await direct(installId);
      await throughService(installId);
      recordServiceCalls();
    }
    runtime.clearRequests();
    seen = 0;
    wrongCacheState = 0;

    // Sequential, interleaved one by one: direct, service, direct, service, …
    const directSamples: number[] = [];
    const missSamples: number[] = [];
    const missRequestIds: string[] = [];
    for (let i = 0; i < CALLS; i += 1) {
      const installId = installs[i % installs.length];
      record('direct', directSamples, await direct(installId));
      record('miss', missSamples, await throughService(installId, false, missRequestIds));
      recordServiceCalls();
    }
    // Concurrent: CONCURRENCY callers, each on its own install, in alternating direct and service blocks.
    const concurrent = { direct: { samples: [] as number[], ms: 0 }, service: { samples: [] as number[], ms: 0 } };
    // Where the cores go on each path: CPU seconds of every process involved, summed over the path's blocks.
    const cpuGroups = await processGroups(env, [
      { name: 'api', pid: api.child.pid },
      { name: 'worker', pid: worker.child.pid },
    ]);
    const cpu = { direct: new Map<string, number>(), service: new Map<string, number>() };
    const block = async (path: 'direct' | 'service', calls: number) => {
      let left = calls;
      const started = process.hrtime.bigint();
      const { shares } = await measureCpu(
        cpuGroups,
        () =>
          Promise.all(
            installs.slice(0, CONCURRENCY).map(async (installId) => {
              while (left > 0) {
                left -= 1;
                record(
                  `concurrent ${path}`,
                  concurrent[path].samples,
                  path === 'direct' ? await direct(installId) : await throughService(installId),
                );
                if (path === 'service') recordServiceCalls();
              }
            }),
          ),
        () => 1,
      );
      concurrent[path].ms += elapsedMs(started);
      for (const share of shares) cpu[path].set(share.name, (cpu[path].get(share.name) ?? 0) + share.cpuSeconds);
    };
    const perBlock = Math.ceil(CONCURRENT_CALLS / CONCURRENT_BLOCKS);
    for (let b = 0; b < CONCURRENT_BLOCKS; b += 1) {
      await block('direct', perBlock);
      await block('service', perBlock);
    }
    // Cache hits: one call per install stores a copy fresh for 300 s (not timed), then every call is served from it.
    runtime.stateTtl = 300;
    for (const installId of installs) await throughService(installId);
    const hitSamples: number[] = [];
    for (let i = 0; i < CALLS; i += 1) record('hit', hitSamples, await throughService(installs[i % installs.length], true));
    if (wrongCacheState > 0) throw new Error(`${wrongCacheState} calls were served from the cache when they should not (or the reverse)`);

    const notes: string[] = [];
    await stopGracefully(api.child, 'the api');
    await stopGracefully(worker.child, 'the worker');
    notes.push(await phaseNote(env.env.DATABASE_URL, missRequestIds, summarise(missSamples).p50Ms));
    if (PROFILE && existsSync(profileFile(PROFILE_NAME))) {
      const summary = summariseProfile(profileFile(PROFILE_NAME));
      writeSummary(PROFILE_NAME, summary);
      notes.push(formatProfile('CPU profile of the api process (dist/main.js) over the whole run, setup and every row', summary));
    }

    const base = summarise(directSamples);
    const sequential = {
      'direct runtime call (interleaved)': { ...base, failed: failed('direct') },
      'through the service, cache miss (interleaved)': { ...summarise(missSamples), failed: failed('miss') },
      'through the service, cache hit': { ...summarise(hitSamples), failed: failed('hit') },
    };
    const table = Object.entries(sequential).map(([target, row]) => ({
      target,
      calls: row.count,
      failed: row.failed,
      p50Ms: row.p50Ms,
      p99Ms: row.p99Ms,
      maxMs: row.maxMs,
      addedP50Ms: round(row.p50Ms - base.p50Ms),
      addedP99Ms: round(row.p99Ms - base.p99Ms),
      p50Ratio: round(row.p50Ms / base.p50Ms),
      p99Ratio: round(row.p99Ms / base.p99Ms),
    }));
    const concurrentRows = (['direct', 'service'] as const).map((path) => {
      const s = summarise(concurrent[path].samples);
      return {
        target: `${path === 'direct' ? 'direct runtime call' : 'through the service, cache miss'}, ${CONCURRENCY} concurrent callers`,
        calls: s.count,
        failed: failed(`concurrent ${path}`),
        callsPerSecond: Math.round((s.count * 1000) / concurrent[path].ms),
        p50Ms: s.p50Ms,
        p99Ms: s.p99Ms,
        maxMs: s.maxMs,
      };
    });
    const [cDirect, cService] = concurrentRows;
    const concurrentTable = concurrentRows.map((r) => ({
      ...r,
      throughputRatio: round(r.callsPerSecond / cDirect.callsPerSecond),
      p50Ratio: round(r.p50Ms / cDirect.p50Ms),
      p99Ratio: round(r.p99Ms / cDirect.p99Ms),
    }));
    const cpuPerCall = (path: 'direct' | 'service') =>
      [...cpu[path].entries()]
        .filter(([, seconds]) => seconds > 0)
        .map(([name, seconds]) => `${name} ${round((seconds * 1000) / Math.max(1, concurrent[path].samples.length), 2)}`)
        .join(', ');
    notes.push(
      `CPU milliseconds per call with ${CONCURRENCY} concurrent callers (all processes share the machine's ${availableParallelism()} cores): direct: ${cpuPerCall('direct')}; through the service: ${cpuPerCall('service')}.`,
    );
    console.table(table);
    console.table(concurrentTable);
    const miss = table[1];
    for (const [row, reasons] of failures)
      notes.push(
        `Failed calls (${row}), not timed: ${[...reasons.entries()]
          .slice(0, 5)
          .map(([reason, n]) => `${n} × ${reason}`)
          .join('; ')}`,
      );
    notes.forEach((note) => console.warn(note));
    const sequentialFailed = table[0].failed + miss.failed;
    const failedText = sequentialFailed > 0 ? `; ${sequentialFailed} calls failed` : '';
    writeResult({
      bench: 'bridge',
      title: 'Runtime bridge: a state call through the service',
      command: 'npm run bench:bridge',
      baseline:
        'the same state call made directly to the same HTTPS runtime with the same client (fetch, keep-alive), interleaved with the service calls',
      params: { calls: CALLS, concurrency: CONCURRENCY, concurrentCalls: CONCURRENT_CALLS, installs: USERS, warmup: WARMUP },
      rows: [...table, ...concurrentTable],
      tables: [
        {
          caption: `Sequential calls, ${CALLS} per row: direct and cache-missing service calls interleaved one by one (the runtime answers ttl 0, so every service call reaches it and writes the cache), and cache hits (ttl 300; measured after the concurrent rows). The api and the worker run as their own processes (dist/); the runtime and the client share this process; both paths use fetch with keep-alive. The machine has 2 cores shared with other work.`,
          columns: ['target', 'calls', 'failed', 'p50 ms', 'p99 ms', 'max ms', 'added p50 ms', 'added p99 ms', 'p50 ratio', 'p99 ratio'],
          rows: table.map((r) => [
            r.target,
            r.calls,
            r.failed,
            r.p50Ms,
            r.p99Ms,
            r.maxMs,
            r.addedP50Ms,
            r.addedP99Ms,
            r.p50Ratio,
            r.p99Ratio,
          ]),
        },
        {
          caption: `${CONCURRENCY} concurrent callers, each on its own install, ${CONCURRENT_CALLS} calls per path in ${CONCURRENT_BLOCKS} alternating blocks (direct, service, …); calls/s is calls over the blocks' wall time. Ratios are against the direct row.`,
          columns: ['target', 'calls', 'failed', 'calls/s', 'p50 ms', 'p99 ms', 'max ms', 'calls/s ratio', 'p50 ratio', 'p99 ratio'],
          rows: concurrentTable.map((r) => [
            r.target,
            r.calls,
            r.failed,
            r.callsPerSecond,
            r.p50Ms,
            r.p99Ms,
            r.maxMs,
            r.throughputRatio,
            r.p50Ratio,
            r.p99Ratio,
          ]),
        },
      ],
      targets: [
        {
          target: 'runtime bridge adds ≤ 2 ms p50',
          measured: `+${miss.addedP50Ms} ms (p50 ${miss.p50Ms} vs ${base.p50Ms} ms, ${CALLS} interleaved calls each${failedText})`,
          met: miss.addedP50Ms <= 2 && CALLS >= 1000 && sequentialFailed === 0,
        },
        {
          target: 'runtime bridge adds ≤ 5 ms p99',
          measured: `+${miss.addedP99Ms} ms (p99 ${miss.p99Ms} vs ${base.p99Ms} ms, ${CALLS} interleaved calls each${failedText})`,
          met: miss.addedP99Ms <= 5 && CALLS >= 1000 && sequentialFailed === 0,
        },
      ],
      notes,
    });
    expect(table).toHaveLength(3);
    // As every bench: nothing lost. The result is written first, with the failures in its notes.
    expect(Object.fromEntries([...failures].map(([row, reasons]) => [row, Object.fromEntries(reasons)]))).toEqual({});
    expect(cService.calls + cService.failed).toBeGreaterThanOrEqual(CONCURRENT_CALLS);
  } finally {
    forget?.();
    for (const role of roles) await stopGracefully(role.child, 'a service process', 10_000);
    await env.close();
    await runtime.close();
    await idp.close();
    await smtp.close();
  }
});
