import request from 'supertest';
import { ConformanceRunner } from '../src/modules/conformance/conformance-runner';
import { normaliseCapabilities } from '../src/modules/descriptors/descriptor-normalizer';
import { TestEnvironment } from '../test/support/harness';
import { goodPackageCapabilities, ProviderRuntime } from '../test/support/provider-runtime';
import { appToken, onboardDeveloper, registerApp } from '../test/support/providers';
import { SmtpSink } from '../test/support/smtp-sink';
import { assertTestCaTrusted } from '../test/support/test-ca';
import { waitFor } from '../test/support/wait-for';
import { ratio, round, summarise, writeResult } from './support/results';

/**
 * Wall time of a full conformance run (all six dimensions) against a
 * conforming HTTPS provider runtime on loopback, two ways: the runner itself
 * (what the worker's job does), and through the API as a provider sees it
 * (POST …/validate?full=true, the queued job on the worker, GET the run until
 * it is completed). Baseline in the same run: as many direct HTTPS calls to
 * the runtime as one run makes (counted at the runtime), one after the other.
 *   npm run bench:conformance   (BENCH_CONFORMANCE_RUNS, default 5)
 */
const RUNS = Number(process.env.BENCH_CONFORMANCE_RUNS ?? 5);

async function timed(work: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

it('times a full six-dimension conformance run against a conforming runtime', async () => {
  assertTestCaTrusted();
  const smtp = await SmtpSink.start();
  const runtime = await ProviderRuntime.start();
  const env = await TestEnvironment.create({ SMTP_URL: smtp.url, LOG_LEVEL: 'warn' });
  try {
    const { url, app } = await env.startApi();
    await env.startWorker();
    const runner = app.get(ConformanceRunner);
    const developer = await onboardDeveloper(url, smtp, 'bench-conformance@example.com');
    // No webhook endpoint: the run then has no receiver to probe (an unreachable one would cost points).
    const registered = await registerApp(url, developer, { webhook_url: undefined });
    const auth = { authorization: `Bearer ${await appToken(url, registered)}` };
    const capabilities = normaliseCapabilities(goodPackageCapabilities());
    // As the conformance job runs it (conformance.processor.ts): the app is the audience of the runtime tokens.
    const input = { runtimeUrl: runtime.url, riskTier: 'action_capable', capabilities, full: true, appId: registered.id };

    // The runner alone. One warm-up run, not recorded.
    await runner.run(input);
    const runnerTimes: number[] = [];
    const callsPerRun: number[] = [];
    for (let i = 0; i < RUNS; i += 1) {
      runtime.clearRequests();
      let score = 0;
      runnerTimes.push(
        await timed(async () => {
          score = (await runner.run(input)).score;
        }),
      );
      if (score !== 100) throw new Error(`a conforming runtime scored ${score}`);
      callsPerRun.push(runtime.requests.length);
    }
    const calls = Math.max(...callsPerRun);

    // Through the API, as a provider: queue, worker, poll (every 10 ms) until completed.
    const pkg = await request(url)
      .post('/v1/providers/packages')
      .set(auth)
      .send({
        appId: registered.id,
        name: 'Bench Finance',
        slug: 'bench-finance',
        description: 'Balances, transfers and a live ticker',
        riskTier: 'action_capable',
        runtimeUrl: runtime.url,
        capabilities: goodPackageCapabilities(),
      })
      .expect(201);
    const path = `/v1/providers/packages/${pkg.body.id}/versions/${pkg.body.versions[0].id}/validate?full=true`;
    const apiTimes: number[] = [];
    const serverTimes: number[] = [];
    for (let i = 0; i <= RUNS; i += 1) {
      let report: { score: number; createdAt: string; completedAt: string } | undefined;
      const ms = await timed(async () => {
        const queued = await request(url).post(path).set(auth).expect(202);
        report = await waitFor(
          async () => {
            const res = await request(url).get(`/v1/providers/conformance/${queued.body.id}`).set(auth).expect(200);
            return res.body.status === 'completed' ? res.body : undefined;
          },
          { what: 'the full conformance run', timeoutMs: 60_000, intervalMs: 10 },
        );
      });
      if (report?.score !== 100) throw new Error(`a conforming runtime scored ${report?.score}`);
      if (i === 0) continue; // warm-up
      apiTimes.push(ms);
      serverTimes.push(new Date(report.completedAt).getTime() - new Date(report.createdAt).getTime());
    }

    // Baseline: the same number of calls straight to the runtime, sequentially. The runtime verifies runtime tokens, so
    // each direct call replays a live state call the runner made (its token, request id and body): the same work for it.
    const FORWARDED = ['authorization', 'content-type', 'x-service-request-id', 'x-service-user-id', 'x-service-livemode'];
    runtime.clearRequests();
    await runner.run(input);
    const candidates = runtime
      .requestsTo('/capabilities/balance/execute')
      .filter((call) => (call.body as { mode?: string } | undefined)?.mode === 'state' && call.headers.authorization);
    const replay = async (call: (typeof candidates)[number]) =>
      fetch(`${runtime.url}/capabilities/balance/execute`, {
        method: 'POST',
        headers: Object.fromEntries(FORWARDED.flatMap((name) => (call.headers[name] ? [[name, String(call.headers[name])]] : []))),
        body: call.rawBody,
      });
    let recorded: (typeof candidates)[number] | undefined;
    for (const call of candidates) {
      const res = await replay(call);
      await res.arrayBuffer();
      if (res.status === 200) {
        recorded = call;
        break;
      }
    }
    if (!recorded) throw new Error('no state call of the runner that the runtime answers 200 when replayed');
    const direct = async () => {
      const res = await replay(recorded);
      if (res.status !== 200) throw new Error(`direct call answered ${res.status}`);
      await res.arrayBuffer();
    };
    await direct();
    const single: number[] = [];
    const baselineTimes: number[] = [];
    for (let i = 0; i < RUNS; i += 1) {
      baselineTimes.push(
        await timed(async () => {
          for (let c = 0; c < calls; c += 1) single.push(await timed(direct));
        }),
      );
    }

    const runnerSummary = summarise(runnerTimes);
    const apiSummary = summarise(apiTimes);
    const serverSummary = summarise(serverTimes);
    const baseline = summarise(baselineTimes);
    const one = summarise(single);
    const rows = [
      {
        target: 'full run, the runner itself (what the worker job does)',
        runs: RUNS,
        p50Ms: runnerSummary.p50Ms,
        maxMs: runnerSummary.maxMs,
        calls,
        ratio: ratio(runnerSummary.p50Ms, baseline.p50Ms, 2),
      },
      {
        target: 'full run through the API: POST validate?full=true → job → GET until completed (10 ms polls)',
        runs: RUNS,
        p50Ms: apiSummary.p50Ms,
        maxMs: apiSummary.maxMs,
        calls,
        ratio: ratio(apiSummary.p50Ms, baseline.p50Ms, 2),
      },
      {
        target: 'the same runs as recorded by the service (created_at → completed_at)',
        runs: RUNS,
        p50Ms: serverSummary.p50Ms,
        maxMs: serverSummary.maxMs,
        calls,
        ratio: ratio(serverSummary.p50Ms, baseline.p50Ms, 2),
      },
      {
        target: `baseline: ${calls} direct state calls to the runtime, one after the other`,
        runs: RUNS,
        p50Ms: baseline.p50Ms,
        maxMs: baseline.maxMs,
        calls,
        ratio: 1,
      },
      {
        target: 'one direct state call',
        runs: one.count,
        p50Ms: one.p50Ms,
        maxMs: one.maxMs,
        calls: 1,
        ratio: ratio(one.p50Ms, baseline.p50Ms, 3),
      },
    ];
    console.table(rows);
    writeResult({
      bench: 'conformance',
      title: 'Conformance: a full six-dimension run',
      command: 'npm run bench:conformance',
      baseline: 'as many direct HTTPS calls to the same runtime as one run makes, sequentially',
      params: { runs: RUNS, callsPerRun },
      rows,
      tables: [
        {
          caption: `A run makes ${calls} HTTPS requests to the runtime (counted at the runtime), in phases, several at once.`,
          columns: ['target', 'runs', 'p50 ms', 'max ms', 'runtime calls', 'ratio to baseline (p50)'],
          rows: rows.map((r) => [r.target, r.runs, round(r.p50Ms, 1), round(r.maxMs, 1), r.calls, r.ratio]),
        },
      ],
      targets: [],
    });
    expect(runnerTimes).toHaveLength(RUNS);
  } finally {
    await env.close();
    await runtime.close();
    await smtp.close();
  }
});
