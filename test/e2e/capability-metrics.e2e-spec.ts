import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, OnboardedDeveloper, publishPackage, registerApp, RegisteredApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';
import { WebhookReceiver } from '../support/webhook-receiver';
import { CapabilityMetrics } from '../../src/modules/runtime-bridge/capability-metrics.service';

const problemType = (code: string) => `https://docs.example.com/developers/errors#${code}`;
const envelope = (code: string, message: string, retryable: boolean) => ({ status: 'error', error: { code, message, retryable } });
/** The documented bound of a percentile estimate: the same log-scale bucket as the exact value. */
const BUCKET_RATIO = 2 ** (1 / 4);

interface CapabilityMetricsBody {
  name: string;
  calls: number;
  errors: number;
  error_rate: number | null;
  errors_by_code: Array<{ code: string; count: number }>;
  cached: number;
  p50_ms: number | null;
  p95_ms: number | null;
  series: Array<{ start: string; calls: number; errors: number; p50_ms: number | null; p95_ms: number | null }>;
}

/** The exact nearest-rank percentile (the ⌈q·n⌉-th smallest) of the runtime calls' durations, from the raw traces. */
function nearestRank(durations: number[], q: number): number {
  const sorted = [...durations].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1];
}

function expectWithinBucket(estimate: number | null, exact: number): void {
  expect(estimate).not.toBeNull();
  if (exact < 1) expect(Math.abs((estimate as number) - exact)).toBeLessThanOrEqual(1);
  else {
    expect(estimate as number).toBeGreaterThanOrEqual(exact / BUCKET_RATIO - 0.1);
    expect(estimate as number).toBeLessThanOrEqual(exact * BUCKET_RATIO + 0.1);
  }
}

/**
 * Metrics per capability (docs/metrics.md): real calls through the bridge to a real provider runtime are traced,
 * rolled up by the worker's job, and read back per window with error codes and percentiles; the webhook delivery
 * success rate per endpoint comes from real deliveries to a real receiver.
 */
describe('provider metrics: per capability and per webhook endpoint', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let receiver: WebhookReceiver;
  let url: string;
  let dataSource: DataSource;
  let metrics: CapabilityMetrics;
  let developer: OnboardedDeveloper;
  let app: RegisteredApp;
  let appAuth: { authorization: string };
  let user: LoggedInUser;
  let packageId: string;
  let installId: string;

  const transactions = () =>
    request(url)
      .post(`/v1/providers/packages/${packageId}/capabilities/transactions/execute`)
      .set(user.auth)
      .send({ params: { account: 'checking' } });
  const read = (query: Record<string, string>, auth = developer.auth) =>
    request(url).get(`/v1/providers/packages/${packageId}/metrics`).query(query).set(auth);
  const traceCount = async () =>
    Number(
      (
        await dataSource.query<Array<{ n: number }>>(`SELECT count(*) AS n FROM capability_executions WHERE package_id = $1`, [packageId])
      )[0].n,
    );
  /** Inserts a trace as the bridge writes it, at a chosen time (the rollup reads what is committed, whenever it was created). */
  const insertTrace = (id: string, createdAt: string, outcome = 'ok', errorCode: string | null = null, durationMs = 40) =>
    dataSource.query(
      `INSERT INTO capability_executions (id, install_id, user_id, app_id, package_id, capability, mode, trigger, outcome,
                                          error_code, attempts, phases, duration_ms, created_at)
       SELECT $1, id, user_id, app_id, package_id, 'transactions', 'history', 'api', $2, $3, 1, '{}', $4, $5 FROM installs WHERE id = $6`,
      [id, outcome, errorCode, durationMs, createdAt, installId],
    );
  const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    receiver = await WebhookReceiver.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env, RUNTIME_RETRY_BASE_MS: '20' });
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    metrics = api.app.get(CapabilityMetrics);
    // Mail, the job relay, webhook deliveries and the scheduled rollup (idempotent, so it may run beside the tests' own runs).
    await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' } });
    developer = await onboardDeveloper(url, smtp, 'metrics@example.com');
    app = await registerApp(url, developer, { webhook_url: receiver.url });
    appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    user = await login(url, idp, { sub: 'uid-metrics', name: 'Metrics User', email: 'metrics-user@example.com' });
    ({ packageId } = await publishPackage(url, appAuth, {
      appId: app.id,
      name: 'Metered Bank',
      slug: 'metered-bank',
      description: 'Balances and transactions',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      capabilities: goodPackageCapabilities(),
    }));
    const install = await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201);
    installId = install.body.id;
    // The worker's scheduled rollup runs as soon as the worker starts (BullMQ runs an `every` job at once), then every minute.
    await waitFor(
      async () => ((await dataSource.query(`SELECT rolled_up_to FROM capability_metrics_rollup`))[0].rolled_up_to ? true : undefined),
      { what: 'the scheduled rollup’s first run' },
    );
    // A trace three hours old and one two days old, then the rollup's state as before its first run, which
    // reaches back eight days (the scheduled run above moved the watermark past them).
    await insertTrace('req_metricsThreeHoursAgo00000', minutesAgo(180), 'failed', 'UPSTREAM_UNAVAILABLE', 900);
    await insertTrace('req_metricsTwoDaysAgo000000000', minutesAgo(2 * 24 * 60), 'ok', null, 900);
    await dataSource.query(`UPDATE capability_metrics_rollup SET rolled_up_to = NULL`);
  }, 90_000);

  afterAll(async () => {
    await env?.close();
    await Promise.all([runtime?.close(), receiver?.close(), smtp?.close(), idp?.close()]);
  });

  describe('per capability', () => {
    let body: { capabilities: CapabilityMetricsBody[]; window: string; bucket_seconds: number; rolled_up_to: string | null };
    let recent: { durations: number[]; calls: number };

    beforeAll(async () => {
      const before = await traceCount();
      // Fast, then slower calls (the runtime adds a delay to every answer while slow), then two refusals.
      for (let i = 0; i < 6; i += 1) await transactions().expect(200);
      await runtime.behave('slow');
      for (const delay of [30, 60, 120, 250]) {
        runtime.slowDelayMs = delay;
        await transactions().expect(200);
      }
      await runtime.behave('conforming');
      runtime.scriptNext({ status: 403, body: envelope('PERMISSION_DENIED', 'no access to that account', false) });
      await transactions().expect(403);
      runtime.scriptNext({ status: 403, body: envelope('PERMISSION_DENIED', 'no access to that account', false) });
      await transactions().expect(403);
      // Reads are traced after their answer: wait for all twelve.
      await waitFor(async () => ((await traceCount()) >= before + 12 ? true : undefined), { what: 'twelve traces' });
      await metrics.rollup();
      const rows: Array<{ duration_ms: number }> = await dataSource.query(
        `SELECT duration_ms FROM capability_executions
          WHERE package_id = $1 AND capability = 'transactions' AND outcome IN ('ok', 'degraded', 'failed') AND created_at > now() - interval '1 hour'`,
        [packageId],
      );
      recent = { durations: rows.map((r) => r.duration_ms), calls: rows.length };
      body = (await read({ window: '1h' }).expect(200)).body;
    }, 60_000);

    it('counts the calls of the last hour, their errors by code and the error rate', () => {
      expect(recent.calls).toBe(12);
      expect(body).toMatchObject({ package_id: packageId, window: '1h', bucket_seconds: 60, rolled_up_to: expect.any(String) });
      const capability = body.capabilities.find((c) => c.name === 'transactions');
      expect(capability).toMatchObject({
        calls: 12,
        errors: 2,
        error_rate: 0.1667,
        errors_by_code: [{ code: 'PERMISSION_DENIED', count: 2 }],
        cached: 0,
      });
    });

    it('estimates p50 and p95 within one log-scale bucket (2^(1/4)) of the exact values from the raw traces', () => {
      const capability = body.capabilities.find((c) => c.name === 'transactions') as CapabilityMetricsBody;
      expectWithinBucket(capability.p50_ms, nearestRank(recent.durations, 0.5));
      expectWithinBucket(capability.p95_ms, nearestRank(recent.durations, 0.95));
      // The slow calls pull p95 above 250 ms; p50 stays with the fast ones.
      expect(capability.p95_ms as number).toBeGreaterThan(200);
      expect(capability.p50_ms as number).toBeLessThan(capability.p95_ms as number);
    });

    it('draws a series of 60 one-minute points that add up to the totals', () => {
      const capability = body.capabilities.find((c) => c.name === 'transactions') as CapabilityMetricsBody;
      expect(capability.series).toHaveLength(60);
      expect(capability.series.reduce((sum, p) => sum + p.calls, 0)).toBe(12);
      expect(capability.series.reduce((sum, p) => sum + p.errors, 0)).toBe(2);
      const starts = capability.series.map((p) => Date.parse(p.start));
      expect(starts.every((s, i) => i === 0 || s - starts[i - 1] === 60_000)).toBe(true);
      expect(capability.series.at(-1)?.calls).toBeGreaterThanOrEqual(0);
    });

    it('widens with the window: 24h adds the trace three hours old, 7d the one two days old', async () => {
      const day = (await read({ window: '24h' }).expect(200)).body as typeof body;
      const week = (await read({ window: '7d' }).expect(200)).body as typeof body;
      const dayT = day.capabilities.find((c) => c.name === 'transactions') as CapabilityMetricsBody;
      const weekT = week.capabilities.find((c) => c.name === 'transactions') as CapabilityMetricsBody;
      expect(day).toMatchObject({ window: '24h', bucket_seconds: 3600 });
      expect(dayT.series).toHaveLength(24);
      expect(weekT.series).toHaveLength(168);
      expect(dayT).toMatchObject({ calls: 13, errors: 3 });
      expect(dayT.errors_by_code).toEqual([
        { code: 'PERMISSION_DENIED', count: 2 },
        { code: 'UPSTREAM_UNAVAILABLE', count: 1 },
      ]);
      expect(weekT).toMatchObject({ calls: 14, errors: 3 });
      // The three-hour-old failure sits in the hour bucket it was created in.
      const hour = Math.floor((Date.now() - 180 * 60_000) / 3_600_000) * 3_600_000;
      expect(dayT.series.find((p) => Date.parse(p.start) === hour)).toMatchObject({ calls: 1, errors: 1 });
    });

    it('filters by capability', async () => {
      const res = await read({ window: '7d', capability: 'balance' }).expect(200);
      expect(res.body.capabilities.every((c: CapabilityMetricsBody) => c.name === 'balance')).toBe(true);
      expect(res.body.capabilities.find((c: CapabilityMetricsBody) => c.name === 'transactions')).toBeUndefined();
    });

    it('counts a trace once however often the rollup runs', async () => {
      const first = (await read({ window: '7d' }).expect(200)).body;
      await metrics.rollup();
      await metrics.rollup();
      const again = (await read({ window: '7d' }).expect(200)).body;
      expect({ ...again, rolled_up_to: null }).toEqual({ ...first, rolled_up_to: null });
    });

    it('counts a trace that commits late within the two-minute margin, and not one committed later than that', async () => {
      await metrics.rollup();
      const before = (await read({ window: '1h' }).expect(200)).body.capabilities.find(
        (c: CapabilityMetricsBody) => c.name === 'transactions',
      ) as CapabilityMetricsBody;
      // Created before the last run's watermark, committed after it.
      await insertTrace('req_metricsLateWithinMargin000', new Date(Date.now() - 60_000).toISOString(), 'failed', 'TIMEOUT', 5);
      await insertTrace('req_metricsLateBeyondMargin000', minutesAgo(10), 'failed', 'TIMEOUT', 5);
      await metrics.rollup();
      const after = (await read({ window: '1h' }).expect(200)).body.capabilities.find(
        (c: CapabilityMetricsBody) => c.name === 'transactions',
      ) as CapabilityMetricsBody;
      expect(after.calls).toBe(before.calls + 1);
      expect(after.errors_by_code).toContainEqual({ code: 'TIMEOUT', count: 1 });
    });

    it('answers an app token with packages:read for its own package', async () => {
      const res = await read({ window: '1h' }, appAuth).expect(200);
      expect(res.body.capabilities.map((c: CapabilityMetricsBody) => c.name)).toContain('transactions');
    });
  });

  describe('refusals', () => {
    it('answers 403 insufficient_scope for another developer’s package and app, to its console and to its apps (the spec’s rule)', async () => {
      const other = await onboardDeveloper(url, smtp, 'metrics-other@example.com');
      const otherApp = await registerApp(url, other);
      const otherAuth = { authorization: `Bearer ${await appToken(url, otherApp)}` };
      for (const auth of [other.auth, otherAuth]) {
        const res = await read({ window: '1h' }, auth).expect(403);
        expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
        expect(res.body).toMatchObject({ type: problemType('insufficient_scope'), status: 403 });
        expect(JSON.stringify(res.body)).not.toContain('Metered Bank');
      }
      for (const auth of [other.auth, otherAuth]) {
        const res = await request(url).get(`/v1/providers/apps/${app.id}/webhook/metrics`).set(auth).expect(403);
        expect(res.body.type).toBe(problemType('insufficient_scope'));
      }
    });

    it('answers 404 for a package id that does not exist', async () => {
      const res = await request(url).get('/v1/providers/packages/pkg_0000000000000000000000/metrics').set(developer.auth).expect(404);
      expect(res.body.type).toBe(problemType('not_found'));
    });

    it('refuses an unknown window with 400 naming the field', async () => {
      for (const window of ['2h', '', '1H', '7d;DROP']) {
        const res = await read({ window }).expect(400);
        expect(res.body).toMatchObject({ type: problemType('invalid_format'), field: 'window' });
      }
      const hooks = await request(url)
        .get(`/v1/providers/apps/${app.id}/webhook/metrics`)
        .query({ window: '30d' })
        .set(developer.auth)
        .expect(400);
      expect(hooks.body).toMatchObject({ type: problemType('invalid_format'), field: 'window' });
    });

    it('refuses a malformed capability filter and unknown parameters', async () => {
      expect((await read({ window: '1h', capability: '../x' }).expect(400)).body).toMatchObject({ field: 'capability' });
      expect((await read({ window: '1h', since: 'yesterday' }).expect(400)).body).toMatchObject({ field: 'since' });
    });

    it('refuses an app token without packages:read, a user token and no token', async () => {
      const narrow = { authorization: `Bearer ${await appToken(url, app, 'capabilities:execute')}` };
      expect((await read({ window: '1h' }, narrow).expect(403)).body.type).toBe(problemType('insufficient_scope'));
      await read({ window: '1h' }, user.auth).expect(401);
      await request(url).get(`/v1/providers/packages/${packageId}/metrics`).expect(401);
    });

    it('defaults to the 24-hour window', async () => {
      const res = await request(url).get(`/v1/providers/packages/${packageId}/metrics`).set(developer.auth).expect(200);
      expect(res.body).toMatchObject({ window: '24h', bucket_seconds: 3600 });
    });
  });

  describe('webhook delivery success per endpoint', () => {
    it('answers delivered / settled per endpoint over the window, of real events only (test events and checks apart)', async () => {
      const settledCount = async (test: boolean) =>
        (
          await dataSource.query<Array<{ n: number }>>(
            `SELECT count(*)::integer AS n FROM webhook_deliveries WHERE app_id = $1 AND test = $2 AND status <> 'pending'`,
            [app.id, test],
          )
        )[0].n;
      const all = async (test: boolean) =>
        (
          await dataSource.query<Array<{ n: number }>>(
            `SELECT count(*)::integer AS n FROM webhook_deliveries WHERE app_id = $1 AND test = $2`,
            [app.id, test],
          )
        )[0].n;
      // Earlier calls' capability.invoked deliveries settle first, so the receiver's scripted answers go to the new ones.
      await waitFor(async () => ((await settledCount(false)) === (await all(false)) ? true : undefined), {
        what: 'earlier deliveries settled',
        timeoutMs: 20_000,
      });
      const realBefore = await settledCount(false);
      // Three real events (capability.invoked), one refused with a 400 (failed at once, never retried).
      receiver.respondWith({ status: 200 }, { status: 400, body: 'bad' }, { status: 200 });
      for (let i = 0; i < 3; i += 1) await transactions().expect(200);
      await waitFor(async () => ((await settledCount(false)) >= realBefore + 3 ? true : undefined), {
        what: 'three settled deliveries of real events',
        timeoutMs: 20_000,
      });
      // A test event the receiver refuses: not a delivery of the app's events, so not counted.
      receiver.respondWith({ status: 400, body: 'bad' });
      const testsBefore = await settledCount(true);
      await request(url)
        .post(`/v1/providers/apps/${app.id}/webhook/test`)
        .set(developer.auth)
        .send({ type: 'install.created' })
        .expect(202);
      await waitFor(async () => ((await settledCount(true)) > testsBefore ? true : undefined), {
        what: 'the test delivery settled',
        timeoutMs: 20_000,
      });

      const res = await request(url).get(`/v1/providers/apps/${app.id}/webhook/metrics`).query({ window: '1h' }).set(appAuth).expect(200);
      const real: Array<{ status: string }> = await dataSource.query(
        `SELECT status FROM webhook_deliveries WHERE app_id = $1 AND NOT test AND created_at > now() - interval '1 hour'`,
        [app.id],
      );
      const delivered = real.filter((d) => d.status === 'delivered').length;
      const failed = real.filter((d) => d.status === 'failed').length;
      expect(failed).toBe(1);
      expect(res.body).toMatchObject({ app_id: app.id, window: '1h' });
      expect(res.body.endpoints[0]).toMatchObject({
        endpoint_id: expect.stringMatching(/^whe_/),
        is_primary: true,
        deliveries: real.length,
        delivered,
        failed,
        success_rate: Math.round((delivered / (delivered + failed)) * 10_000) / 10_000,
      });
      expect(res.body.endpoints[0].attempts).toBeGreaterThanOrEqual(real.length);
    });

    it('refuses an app token without webhooks:read', async () => {
      const narrow = { authorization: `Bearer ${await appToken(url, app, 'packages:read')}` };
      const res = await request(url).get(`/v1/providers/apps/${app.id}/webhook/metrics`).set(narrow).expect(403);
      expect(res.body.type).toBe(problemType('insufficient_scope'));
    });
  });

  it('refuses the operator token: metrics are the provider’s own', async () => {
    await request(url)
      .get(`/v1/providers/packages/${packageId}/metrics`)
      .set({ authorization: `Bearer ${OPERATOR_TOKEN}` })
      .expect(401);
  });
});
