import { execFile } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { DomainEvents } from '../src/modules/events/domain-events';
import { freePort } from '../test/support/free-port';
import { SpawnedRole, TestEnvironment } from '../test/support/harness';
import { appToken, onboardDeveloper, registerApp } from '../test/support/providers';
import { subscribeWebhook } from '../test/support/webhook-profiles';
import { SmtpSink } from '../test/support/smtp-sink';
import { assertTestCaTrusted } from '../test/support/test-ca';
import { waitFor } from '../test/support/wait-for';
import { ReceivedWebhook, WebhookReceiver } from '../test/support/webhook-receiver';
import { CpuShare, measureCpu, processGroups } from './support/process-cpu';
import { formatProfile, PROFILES_DIR, profileThisProcess, summariseProfile, writeSummary } from './support/profile';
import { ratio, round, summarise, writeResult } from './support/results';

/**
 * Webhook throughput end to end: domain events recorded with
 * `DomainEvents.record` (the outbox API every area uses) in committed
 * transactions, dispatched by the worker (a separate process, `dist/worker.js`,
 * default settings: 32 deliveries at once, 4 per endpoint), fanned out to
 * deliveries, queued in BullMQ, signed and POSTed over HTTPS to a local
 * receiver. Events are spread over APPS apps (each its own endpoint and
 * signing secret), so the per-endpoint limit leaves the worker's 32 slots
 * usable. After an untimed warm-up at the paced rate: a paced phase (one
 * event per transaction at a steady rate: latency when the pipeline keeps
 * up), then bursts (EVENTS events as fast as two producers can commit them:
 * throughput and the backlog's latency) with one worker, with two worker
 * processes, and with one again. Baseline in the same run: the same number of
 * signed POSTs (the service's own envelope, signer and HTTPS sender) from a
 * plain loop with the same number in flight, no outbox, queue or database,
 * run before the first burst and after the last. Each comparison is against
 * the mean of the runs either side of it, so a host whose speed drifts
 * during the run moves both sides alike.
 *   npm run bench:webhooks   (BENCH_WEBHOOK_EVENTS=20000, BENCH_WEBHOOK_APPS=8, BENCH_PROFILE=1 profiles the worker)
 */
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 20_000);
const APPS = Number(process.env.BENCH_WEBHOOK_APPS ?? 8);
/** Events per producer transaction in the burst: a bulk change recording many events at once. */
const BATCH = Number(process.env.BENCH_WEBHOOK_BATCH ?? 100);
const PRODUCERS = 2;
const PACED_EVENTS = Number(process.env.BENCH_WEBHOOK_PACED_EVENTS ?? 1_000);
const PACED_RATE = Number(process.env.BENCH_WEBHOOK_PACED_RATE ?? 100);
/**
 * Events sent at the paced rate before the measured paced phase, delivered but not timed: the first second or two
 * of a fresh worker and api (JIT, pools, TLS sessions to the receiver) is start-up, not the steady latency the
 * paced target is about. On a slow host the first 1.7 s measured 50–370 ms, which alone was the paced p99.
 */
const WARMUP_EVENTS = Number(process.env.BENCH_WEBHOOK_WARMUP_EVENTS ?? 200);
/** The worker's defaults: `WebhookDeliveryProcessor` concurrency and `WEBHOOK_ENDPOINT_CONCURRENCY`. */
const WORKER_CONCURRENCY = 64;
const ENDPOINT_CONCURRENCY = 4;
const IN_FLIGHT = Math.min(WORKER_CONCURRENCY, APPS * ENDPOINT_CONCURRENCY);
/** Give up when no delivery arrives for this long. */
const STALL_MS = 60_000;
const PROFILE = process.env.BENCH_PROFILE === '1';

interface AppTarget {
  appId: string;
  url: string;
  secret: string;
}

interface LoopResult {
  count: number;
  seconds: number;
  perSecond: number;
  latencies: { p50: number; p99: number; max: number };
  failures: number;
  /** CPU seconds the loop's own process used while sending (process.cpuUsage). */
  cpuSeconds: number;
}

function signedPostLoop(count: number, targets: AppTarget[], idPrefix: string): Promise<LoopResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [
        ...(PROFILE
          ? ['--cpu-prof', `--cpu-prof-dir=${PROFILES_DIR}`, '--cpu-prof-name=webhooks-loop.cpuprofile', '--cpu-prof-interval=500']
          : []),
        join(__dirname, 'support', 'signed-post-loop.js'),
        JSON.stringify({ count, concurrency: IN_FLIGHT, targets, idPrefix }),
      ],
      { maxBuffer: 1 << 20, timeout: 600_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout) as LoopResult)),
    );
  });
}

function specSignatureValid(secret: string, r: ReceivedWebhook): boolean {
  const header = r.headers['x-service-signature'];
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = createHmac('sha256', secret).update(r.raw).digest();
  const given = Buffer.from(header.slice(7), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function standardSignatureValid(secret: string, r: ReceivedWebhook): boolean {
  try {
    new Webhook(secret).verify(r.raw.toString('utf8'), {
      'webhook-id': r.headers['webhook-id'] as string,
      'webhook-timestamp': r.headers['webhook-timestamp'] as string,
      'webhook-signature': r.headers['webhook-signature'] as string,
    });
    return true;
  } catch {
    return false;
  }
}

/** First receipt per event id, and how many event ids arrived more than once. */
function receipts(received: ReceivedWebhook[], ids: Set<string>) {
  const first = new Map<string, ReceivedWebhook>();
  let duplicates = 0;
  for (const r of received) {
    const id = r.body.id as string;
    if (!ids.has(id)) continue;
    if (first.has(id)) duplicates += 1;
    else first.set(id, r);
  }
  return { first, duplicates };
}

/**
 * Waits until every id has arrived, failing only when nothing new arrived for STALL_MS. Reads only the receipts
 * that came in since its last look: rescanning all of them every 50 ms took a quarter of this process's CPU during
 * the burst, CPU the service's processes then lacked.
 */
async function allReceived(receiver: WebhookReceiver, ids: Set<string>, what: string): Promise<void> {
  const arrived = new Set<string>();
  let scanned = 0;
  let seen = 0;
  let progressAt = Date.now();
  for (;;) {
    const list = receiver.received;
    if (list.length < scanned) scanned = 0; // the list was emptied between phases
    for (; scanned < list.length; scanned += 1) {
      const id = list[scanned].body.id as string;
      if (ids.has(id)) arrived.add(id);
    }
    const now = arrived.size;
    if (now >= ids.size) return;
    if (now > seen) {
      seen = now;
      progressAt = Date.now();
    } else if (Date.now() - progressAt > STALL_MS) {
      throw new Error(`${what}: ${now} of ${ids.size} received, none for ${STALL_MS / 1000} s`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * How often BullMQ started the delivery jobs of these events (`ats` in the job's hash): a job started more than
 * once failed before (it ran before the fan-out's transaction committed, found no row, and was retried 500 ms
 * later). BullMQ keeps only the last 1,000 completed jobs (`removeOnComplete`), so this reads the jobs still kept.
 */
/**
 * Deliveries sent more than once. The receiver answers 2xx, so every delivery
 * should be claimed and attempted exactly once: a second attempt means a
 * drain re-sent it (a lease that lapsed, a claim taken twice).
 */
async function resends(dataSource: DataSource, eventIds: Set<string>) {
  const [row]: Array<{ deliveries: number; resent: number; max: number }> = await dataSource.query(
    `SELECT count(*)::int AS deliveries, count(*) FILTER (WHERE attempt_count > 1)::int AS resent, COALESCE(max(attempt_count), 0)::int AS max
       FROM webhook_deliveries WHERE event_id = ANY($1)`,
    [[...eventIds]],
  );
  return { ...row, resentPct: round((100 * row.resent) / Math.max(1, row.deliveries), 1) };
}

it(`delivers ${EVENTS} events over the outbox and queue, against a plain signed-POST loop`, async () => {
  assertTestCaTrusted();
  if (!existsSync(join(__dirname, '..', 'dist', 'worker.js'))) throw new Error('dist/worker.js is missing: run npx nest build first');
  const smtp = await SmtpSink.start();
  const receiver = await WebhookReceiver.start();
  const env = await TestEnvironment.create({ SMTP_URL: smtp.url, LOG_LEVEL: 'warn' });
  let worker: SpawnedRole | undefined;
  try {
    const api = await env.startApi();
    const url = api.url;
    const dataSource: DataSource = api.app.get(getDataSourceToken());
    const events = api.app.get(DomainEvents);
    const healthPort = await freePort();
    if (PROFILE) mkdirSync(PROFILES_DIR, { recursive: true });
    worker = env.spawnRole(
      'worker',
      { LOG_LEVEL: 'warn', WORKER_HEALTH_PORT: String(healthPort) },
      PROFILE
        ? ['--cpu-prof', `--cpu-prof-dir=${PROFILES_DIR}`, '--cpu-prof-name=webhooks-worker.cpuprofile', '--cpu-prof-interval=500']
        : [],
    );
    const started = worker;
    const state = await waitFor(
      async () => {
        if (started.child.exitCode !== null) return 'exited';
        const res = await fetch(`http://127.0.0.1:${healthPort}/health/ready`).catch(() => null);
        return res?.status === 200 ? 'ready' : undefined;
      },
      { what: 'worker ready', timeoutMs: 60_000, intervalMs: 100 },
    );
    if (state === 'exited') throw new Error(`worker exited: ${started.output.slice(-2000)}`);

    const developer = await onboardDeveloper(url, smtp, 'bench-hooks@example.com');
    const targets: AppTarget[] = [];
    for (let i = 0; i < APPS; i += 1) {
      const app = await registerApp(url, developer, { name: `Bench Hooks ${i}`, webhook_url: `${receiver.url}/${i}` });
      const auth = { authorization: `Bearer ${await appToken(url, app)}` };
      const secret = await subscribeWebhook(url, app, auth, { event_types: ['capability.invoked'] });
      targets.push({ appId: app.id, url: `${receiver.url}/${i}`, secret });
    }
    const secretOf = new Map(targets.map((t) => [t.appId, t.secret]));
    const commitAt = new Map<string, number>();

    let sequence = 0;
    const payload = () => {
      const i = sequence++;
      return {
        type: 'capability.invoked',
        payload: {
          app_id: targets[i % APPS].appId,
          data: {
            capability_name: 'balance',
            mode: 'state',
            user_id: 'usr_bench',
            install_id: 'inst_bench',
            request_id: `req_bench${i}`,
            duration_ms: 12,
            status: 'ok',
          },
        },
      };
    };
    const record = async (count: number): Promise<string[]> => {
      const ids: string[] = [];
      await dataSource.transaction(async (manager) => {
        if (count === 1) ids.push((await events.record(manager, payload())).id);
        else ids.push(...(await events.recordMany(manager, Array.from({ length: count }, payload))).map((e) => e.id));
      });
      const at = Date.now();
      for (const id of ids) commitAt.set(id, at);
      return ids;
    };
    const latencies = (first: Map<string, ReceivedWebhook>) => [...first].map(([id, r]) => r.at - commitAt.get(id)!);

    /** `count` events, one per transaction, at PACED_RATE a second; waits until each has been received. */
    const sendPaced = async (count: number, phase: string): Promise<Set<string>> => {
      const ids = new Set<string>();
      const start = Date.now();
      for (let i = 0; i < count; i += 1) {
        const due = start + (i * 1000) / PACED_RATE;
        if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
        for (const id of await record(1)) ids.add(id);
      }
      await allReceived(receiver, ids, phase);
      return ids;
    };

    // Warm-up at the paced rate, delivered and counted below but not timed (see WARMUP_EVENTS).
    await sendPaced(WARMUP_EVENTS, 'warm-up');
    receiver.received.length = 0;

    // Phase 1, paced: one event per transaction at PACED_RATE a second.
    const pacedIds = await sendPaced(PACED_EVENTS, 'paced phase');
    const paced = receipts(receiver.received, pacedIds);
    const pacedLatency = summarise(latencies(paced.first));
    // Now, while BullMQ still keeps these jobs.
    const pacedJobs = await resends(dataSource, pacedIds);
    receiver.received.length = 0;

    // Phase 2, burst: EVENTS events committed by two producers as fast as they can.
    const runBurst = async (phase: string) => {
      const ids = new Set<string>();
      let remaining = EVENTS;
      const start = Date.now();
      await Promise.all(
        Array.from({ length: PRODUCERS }, async () => {
          while (remaining > 0) {
            const n = Math.min(BATCH, remaining);
            remaining -= n;
            for (const id of await record(n)) ids.add(id);
          }
        }),
      );
      const producedSeconds = (Date.now() - start) / 1000;
      await allReceived(receiver, ids, phase);
      const got = receipts(receiver.received, ids);
      const firstCommitAt = [...ids].reduce((min, id) => Math.min(min, commitAt.get(id)!), Infinity);
      const lastReceiptAt = [...got.first.values()].reduce((max, r) => Math.max(max, r.at), 0);
      const seconds = (lastReceiptAt - firstCommitAt) / 1000;
      return { ids, producedSeconds, got, seconds, latency: summarise(latencies(got.first)), perSecond: Math.round(EVENTS / seconds) };
    };
    // CPU per delivery by process over the burst and the loop: what the two cores spent, and on what.
    const cpuGroups = await processGroups(env, [{ name: 'worker', pid: started.child.pid }]);
    /**
     * The baseline: the same number of signed POSTs, same receiver, same number in flight, no queue. Run before the
     * first burst and after the last, and compared as their mean: the loop's rate moved by half from one run to the
     * next on a shared host, more than anything the service changed.
     */
    const runLoop = async (idPrefix: string) => {
      receiver.received.length = 0;
      const measuredLoop = await measureCpu(
        cpuGroups.filter((g) => g.name !== 'worker'),
        () => signedPostLoop(EVENTS, targets, idPrefix),
        () => EVENTS,
      );
      const result = measuredLoop.result;
      const ids = new Set(Array.from({ length: EVENTS }, (_, i) => `${idPrefix}${String(i).padStart(12, '0')}`));
      const got = receipts(receiver.received, ids);
      receiver.received.length = 0;
      const cpu: CpuShare[] = [
        {
          name: 'signed-POST loop',
          cpuSeconds: round(result.cpuSeconds, 2),
          msPerUnit: round((result.cpuSeconds * 1000) / EVENTS, 3),
          corePct: round((100 * result.cpuSeconds) / measuredLoop.seconds, 1),
        },
        ...measuredLoop.shares,
      ];
      return { ...result, cpu, duplicates: got.duplicates, missing: EVENTS - got.first.size };
    };
    const loopBefore = await runLoop('evt_baseline_a');
    const measured = await measureCpu(
      cpuGroups,
      async () => (PROFILE ? (await profileThisProcess('webhooks-bench-process', () => runBurst('burst'))).result : runBurst('burst')),
      () => EVENTS,
    );
    const one = measured.result;
    const burstCpu = measured.shares;
    const burstIds = one.ids;
    const producedIn = one.producedSeconds;
    const burst = one.got;
    const burstSeconds = one.seconds;
    const burstLatency = one.latency;

    // Signatures of about 400 receipts spread over the burst, checked as a receiver would.
    const sample = receiver.received.filter((_, i) => i % Math.max(1, Math.floor(receiver.received.length / 400)) === 0);
    const specValid = sample.filter((r) => specSignatureValid(secretOf.get(r.body.app_id as string)!, r)).length;
    const standardValid = sample.filter((r) => standardSignatureValid(secretOf.get(r.body.app_id as string)!, r)).length;
    // Every delivery row is marked delivered (the receipt comes before the row's update).
    const total = WARMUP_EVENTS + PACED_EVENTS + EVENTS;
    const statuses = await waitFor(
      async () => {
        const rows: Array<{ status: string; n: number }> = await dataSource.query(
          `SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status`,
        );
        const counts = Object.fromEntries(rows.map((r) => [r.status, r.n]));
        return counts.delivered === total ? counts : undefined;
      },
      { what: `${total} deliveries marked delivered`, timeoutMs: 60_000, intervalMs: 200 },
    );
    const burstJobs = await resends(dataSource, burstIds);
    // Where the time goes: commit → fan-out (the dispatcher's transaction start) → first attempt starts (the job
    // runs) → delivered (the row's update after the receiver answered).
    const stages = async (ids: Set<string>) => {
      const stageRows: Array<{ id: string; dispatched: Date; attempted: Date; delivered: Date; latency: number }> = await dataSource.query(
        `SELECT e.id, e.dispatched_at AS dispatched, a.started_at AS attempted, d.delivered_at AS delivered, a.latency_ms AS latency
           FROM events e JOIN webhook_deliveries d ON d.event_id = e.id
           JOIN webhook_attempts a ON a.delivery_id = d.id AND a.attempt = 1
          WHERE e.id = ANY($1)`,
        [[...ids]],
      );
      const dispatchTimes = stageRows.map((r) => r.dispatched.getTime());
      return {
        outbox: summarise(stageRows.map((r) => r.dispatched.getTime() - commitAt.get(r.id)!)),
        queue: summarise(stageRows.map((r) => r.attempted.getTime() - r.dispatched.getTime())),
        send: summarise(stageRows.map((r) => r.delivered.getTime() - r.attempted.getTime())),
        http: summarise(stageRows.map((r) => r.latency)),
        fanOutSeconds: (Math.max(...dispatchTimes) - Math.min(...dispatchTimes)) / 1000,
      };
    };
    const pacedStages = await stages(pacedIds);
    const burstStages = await stages(burstIds);

    // Phase 3, the same burst with a second worker process beside the first: not slower, nothing twice.
    const secondPort = await freePort();
    const second = env.spawnRole('worker', { LOG_LEVEL: 'warn', WORKER_HEALTH_PORT: String(secondPort) });
    await waitFor(
      async () => {
        if (second.child.exitCode !== null) throw new Error(`second worker exited: ${second.output.slice(-2000)}`);
        const res = await fetch(`http://127.0.0.1:${secondPort}/health/ready`).catch(() => null);
        return res?.status === 200 ? true : undefined;
      },
      { what: 'second worker ready', timeoutMs: 60_000, intervalMs: 100 },
    );
    const twoMeasured = await measureCpu(
      [...cpuGroups, { name: 'second worker', pids: () => (second.child.pid ? [second.child.pid] : []) }],
      () => runBurst('burst, two workers'),
      () => EVENTS,
    );
    const two = twoMeasured.result;
    const twoStatuses = await waitFor(
      async () => {
        const rows: Array<{ status: string; n: number }> = await dataSource.query(
          `SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status`,
        );
        const counts = Object.fromEntries(rows.map((r) => [r.status, r.n]));
        return counts.delivered === total + EVENTS ? counts : undefined;
      },
      { what: `${total + EVENTS} deliveries marked delivered`, timeoutMs: 60_000, intervalMs: 200 },
    );
    const twoStages = await stages(two.ids);
    receiver.received.length = 0;
    second.child.kill('SIGTERM');
    await Promise.race([second.exited, new Promise((r) => setTimeout(r, 30_000).unref())]);

    // Phase 4, the one-worker burst again, then the loop again: each comparison is against the mean of the runs
    // either side of it (one worker around two; the loop around both one-worker bursts).
    const again = await runBurst('burst, one worker again');
    await waitFor(
      async () => {
        const [row]: Array<{ n: number }> = await dataSource.query(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'delivered'`,
        );
        return row.n === total + 2 * EVENTS ? true : undefined;
      },
      { what: `${total + 2 * EVENTS} deliveries marked delivered`, timeoutMs: 60_000, intervalMs: 200 },
    );
    const loopAfter = await runLoop('evt_baseline_b');
    const perSecond = Math.round((one.perSecond + again.perSecond) / 2);
    const loopPerSecond = (loopBefore.perSecond + loopAfter.perSecond) / 2;
    const cpuLine = (shares: CpuShare[]) =>
      `${shares.map((s) => `${s.name} ${s.msPerUnit} ms (${s.corePct} % of a core)`).join('; ')}; in all ${round(
        shares.reduce((sum, s) => sum + s.msPerUnit, 0),
        3,
      )} ms`;

    const notes: string[] = [];
    if (PROFILE && worker) {
      worker.child.kill('SIGTERM');
      await Promise.race([worker.exited, new Promise((r) => setTimeout(r, 30_000).unref())]);
      const file = join(PROFILES_DIR, 'webhooks-worker.cpuprofile');
      if (existsSync(file)) {
        const summary = summariseProfile(file);
        writeSummary('webhooks-worker', summary);
        notes.push(formatProfile('CPU profile of the worker process over the whole run', summary));
      }
      const loopFile = join(PROFILES_DIR, 'webhooks-loop.cpuprofile');
      if (existsSync(loopFile)) {
        const summary = summariseProfile(loopFile);
        writeSummary('webhooks-loop', summary);
        notes.push(formatProfile('CPU profile of the plain signed-POST loop', summary));
      }
    }

    const rows = [
      {
        target: `outbox → queue → HTTPS, paced (${PACED_RATE}/s, one event per transaction)`,
        events: PACED_EVENTS,
        perSecond: PACED_RATE,
        p50Ms: pacedLatency.p50Ms,
        p99Ms: pacedLatency.p99Ms,
        maxMs: pacedLatency.maxMs,
        duplicates: paced.duplicates,
        missing: PACED_EVENTS - paced.first.size,
      },
      {
        target: `outbox → queue → HTTPS, burst (${PRODUCERS} producers, ${BATCH} events per transaction)`,
        events: EVENTS,
        perSecond: one.perSecond,
        p50Ms: burstLatency.p50Ms,
        p99Ms: burstLatency.p99Ms,
        maxMs: burstLatency.maxMs,
        duplicates: burst.duplicates,
        missing: EVENTS - burst.first.size,
        ratio: ratio(one.perSecond, loopPerSecond),
      },
      {
        target: `outbox → queue → HTTPS, burst, two worker processes`,
        events: EVENTS,
        perSecond: two.perSecond,
        p50Ms: two.latency.p50Ms,
        p99Ms: two.latency.p99Ms,
        maxMs: two.latency.maxMs,
        duplicates: two.got.duplicates,
        missing: EVENTS - two.got.first.size,
        ratio: ratio(two.perSecond, loopPerSecond),
      },
      {
        target: `outbox → queue → HTTPS, burst, one worker again`,
        events: EVENTS,
        perSecond: again.perSecond,
        p50Ms: again.latency.p50Ms,
        p99Ms: again.latency.p99Ms,
        maxMs: again.latency.maxMs,
        duplicates: again.got.duplicates,
        missing: EVENTS - again.got.first.size,
        ratio: ratio(again.perSecond, loopPerSecond),
      },
      ...(
        [
          ['before the first burst', loopBefore],
          ['after the last burst', loopAfter],
        ] as const
      ).map(([when, loop]) => ({
        target: `plain signed-POST loop, ${IN_FLIGHT} in flight, ${when}`,
        events: EVENTS,
        perSecond: Math.round(loop.perSecond),
        p50Ms: loop.latencies.p50,
        p99Ms: loop.latencies.p99,
        maxMs: loop.latencies.max,
        duplicates: loop.duplicates,
        missing: loop.missing,
        ratio: ratio(loop.perSecond, loopPerSecond),
      })),
    ];
    console.table(rows);
    writeResult({
      bench: 'webhooks',
      title: 'Webhooks: signed deliveries end to end',
      command: 'npm run bench:webhooks',
      baseline: `the service's envelope, signer and HTTPS sender in a plain loop (separate process), ${IN_FLIGHT} in flight, no outbox, queue or database`,
      params: {
        events: EVENTS,
        apps: APPS,
        batch: BATCH,
        producers: PRODUCERS,
        warmupEvents: WARMUP_EVENTS,
        pacedEvents: PACED_EVENTS,
        pacedRate: PACED_RATE,
        workerConcurrency: WORKER_CONCURRENCY,
        endpointConcurrency: ENDPOINT_CONCURRENCY,
        inFlight: IN_FLIGHT,
      },
      rows,
      tables: [
        {
          caption:
            'Latency of the pipeline rows is event commit → first receipt at the receiver; of the loop, one POST round trip. ' +
            'A burst row’s deliveries/s is events ÷ (last receipt − first commit). Ratios are to the mean of the two loops.',
          columns: ['target', 'events', 'deliveries/s', 'p50 ms', 'p99 ms', 'max ms', 'duplicates', 'missing', 'ratio to loop'],
          rows: rows.map((r) => [r.target, r.events, r.perSecond, r.p50Ms, r.p99Ms, r.maxMs, r.duplicates, r.missing, r.ratio ?? '']),
        },
        {
          columns: ['check', 'result'],
          rows: [
            ['burst committed by the producers in', `${round(producedIn, 1)} s (${Math.round(EVENTS / producedIn)} events/s)`],
            ['burst delivered in (first commit → last receipt)', `${round(burstSeconds, 1)} s`],
            ['CPU per delivery, burst (one worker)', cpuLine(burstCpu)],
            ['CPU per delivery, burst with two workers', cpuLine(twoMeasured.shares)],
            ['CPU per delivery, plain loop (the run before the first burst)', cpuLine(loopBefore.cpu)],
            ['X-Service-Signature valid (sampled receipts)', `${specValid} of ${sample.length}`],
            ['Standard Webhooks signature valid (same sample)', `${standardValid} of ${sample.length}`],
            ['delivery rows by status', JSON.stringify(statuses)],
            ['delivery rows by status after the two-worker burst', JSON.stringify(twoStatuses)],
            ...(
              [
                ['paced', pacedStages],
                ['burst', burstStages],
                ['burst with two workers', twoStages],
              ] as const
            ).map(([phase, stage]) => [
              `stages, ${phase}: commit → fan-out → first attempt → delivered`,
              `outbox p50 ${stage.outbox.p50Ms} ms (p99 ${stage.outbox.p99Ms}); queue p50 ${stage.queue.p50Ms} ms (p99 ${stage.queue.p99Ms}); ` +
                `send and record p50 ${stage.send.p50Ms} ms (p99 ${stage.send.p99Ms}), of which the POST p50 ${stage.http.p50Ms} ms (p99 ${stage.http.p99Ms})` +
                (phase !== 'paced'
                  ? `; first to last fan-out ${round(stage.fanOutSeconds, 1)} s (about ${Math.round(EVENTS / Math.max(stage.fanOutSeconds, 0.001))} events/s)`
                  : ''),
            ]),
            ...(
              [
                ['paced', pacedJobs],
                ['burst', burstJobs],
              ] as const
            ).map(([phase, jobs]) => [
              `deliveries attempted more than once, ${phase} (receiver always answers 2xx)`,
              `${jobs.resentPct} % (${jobs.resent} of ${jobs.deliveries}); most attempts of one delivery: ${jobs.max}`,
            ]),
          ],
        },
      ],
      targets: [
        {
          target: '≥ 2,000 signed webhook deliveries/s end to end',
          measured: `${perSecond}/s (burst; mean of ${one.perSecond} and ${again.perSecond}, the one-worker runs)`,
          met: perSecond >= 2000,
        },
        {
          target: '≥ 50 % of the bare signed-POST loop',
          measured: `${(100 * ratio(perSecond, loopPerSecond)).toFixed(1)} % (burst ${perSecond}/s; loop ${Math.round(loopPerSecond)}/s, mean of ${Math.round(loopBefore.perSecond)} before the bursts and ${Math.round(loopAfter.perSecond)} after)`,
          met: perSecond >= 0.5 * loopPerSecond,
        },
        {
          target: 'paced (100 events/s): commit → receipt p99 < 50 ms',
          measured: `p99 ${pacedLatency.p99Ms} ms (p50 ${pacedLatency.p50Ms} ms)`,
          met: pacedLatency.p99Ms < 50,
        },
        {
          target: 'two worker processes: not slower than one, nothing delivered twice',
          measured: `${two.perSecond}/s with two, ${perSecond}/s with one (mean of ${one.perSecond} before and ${again.perSecond} after); ${two.got.duplicates} duplicates`,
          met: two.perSecond >= perSecond * 0.95 && two.got.duplicates === 0,
        },
        {
          target: 'deliveries attempted more than once < 1 % in the burst',
          measured: `${burstJobs.resentPct} % (${burstJobs.resent} of ${burstJobs.deliveries})`,
          met: Number(burstJobs.resentPct) < 1,
        },
      ],
      notes,
    });
    expect({
      pacedMissing: rows[0].missing,
      burstMissing: rows[1].missing,
      twoMissing: rows[2].missing,
      againMissing: rows[3].missing,
      loopFailures: loopBefore.failures + loopAfter.failures,
      loopMissing: loopBefore.missing + loopAfter.missing,
    }).toEqual({
      pacedMissing: 0,
      burstMissing: 0,
      twoMissing: 0,
      againMissing: 0,
      loopFailures: 0,
      loopMissing: 0,
    });
    expect(two.got.duplicates + again.got.duplicates).toBe(0);
    expect({ specValid, standardValid }).toEqual({ specValid: sample.length, standardValid: sample.length });
  } finally {
    await env.close();
    await receiver.close();
    await smtp.close();
  }
});
