import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, OnboardedDeveloper, publishPackage, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';

const problemType = (code: string) => `https://docs.example.com/developers/errors#${code}`;
const envelope = (code: string, message: string, retryable: boolean) => ({ status: 'error', error: { code, message, retryable } });

interface Execution {
  request_id: string;
  app_id: string;
  package_id: string;
  install_id: string;
  capability: string;
  mode: string;
  trigger: string;
  outcome: string;
  error_code: string | null;
  attempts: number;
  duration_ms: number;
  created_at: string;
}

/**
 * The execution log (GET /v1/providers/executions): the traces of a
 * provider's capability calls against a real HTTPS provider runtime, found by
 * the request id the runtime received.
 */
describe('provider execution log', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let dataSource: DataSource;
  let developer: OnboardedDeveloper;
  let appId: string;
  let appAuth: { authorization: string };
  let packageId: string;
  let installId: string;
  let user: LoggedInUser;
  /** A successful state call and a failed confirmed action, made once for the tests below. */
  let okId: string;
  let failedId: string;

  const executions = (query: Record<string, string | number> = {}, auth = appAuth) =>
    request(url).get('/v1/providers/executions').query(query).set(auth);
  const execution = (requestId: string, auth = appAuth) => request(url).get(`/v1/providers/executions/${requestId}`).set(auth);
  const execute = (capability: string, body: Record<string, unknown>) =>
    request(url).post(`/v1/providers/packages/${packageId}/capabilities/${capability}/execute`).set(user.auth).send(body);
  // A read's trace is written after its answer: wait until the log shows it.
  const logged = (requestId: string) =>
    waitFor(
      async () => {
        const res = await execution(requestId);
        return res.status === 200 ? (res.body as Execution & Record<string, unknown>) : undefined;
      },
      { what: `the trace of ${requestId}` },
    );
  const ids = (res: request.Response) => (res.body.executions as Execution[]).map((e) => e.request_id);

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({
      SMTP_URL: smtp.url,
      ...idp.env,
      RUNTIME_RETRY_BASE_MS: '20',
      RUNTIME_TIMEOUT_MS: '1500',
    });
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    // The state poller ticks hourly: only these tests' calls reach the scripted runtime.
    await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' } });
    developer = await onboardDeveloper(url, smtp, 'executions@example.com');
    const app = await registerApp(url, developer);
    appId = app.id;
    appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    ({ packageId } = await publishPackage(url, appAuth, {
      appId,
      name: 'Acme Bank Log',
      slug: 'acme-bank-log',
      description: 'Balances and transfers',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      capabilities: goodPackageCapabilities(),
    }));
    user = await login(url, idp, { sub: 'uid-executions', name: 'Log User', email: 'log-user@example.com' });
    installId = (await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201)).body.id;

    runtime.clearRequests();
    // A state call that needs one retry: the runtime's INTERNAL_ERROR is retryable.
    runtime.scriptNext({ status: 500, body: envelope('INTERNAL_ERROR', 'flaky ledger', true) });
    okId = (await execute('balance', { params: { account: 'savings' } }).expect(200)).body.requestId;
    // An action the runtime refuses once confirmed: CONFLICT is final.
    const pending = await execute('transfer', { input: { toAccount: 'DE89370400440532013000', amount: 5, currency: 'EUR' } }).expect(202);
    runtime.scriptNext({ status: 409, body: envelope('CONFLICT', 'transfer already booked', false) });
    await request(url).post(`/v1/actions/${pending.body.confirmationId}/confirm`).set(user.auth).expect(409);
    // The user's answer names no request id: the runtime's side of the call does, as a provider would read it in its own logs.
    failedId = runtime.requestsTo('/capabilities/transfer/execute')[0].headers['x-service-request-id'] as string;
    await logged(okId);
  }, 90_000);

  afterAll(async () => {
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  it('shows a successful state call with its four phases in order, its attempts and the request id the runtime received', async () => {
    const calls = runtime.requestsTo('/capabilities/balance/execute').filter((c) => c.headers['x-service-request-id'] === okId);
    expect(calls).toHaveLength(2);
    expect(calls.every((c) => c.claims?.rid === okId)).toBe(true);

    const trace = await logged(okId);
    expect(trace).toMatchObject({
      request_id: okId,
      app_id: appId,
      package_id: packageId,
      install_id: installId,
      user_id: user.id,
      capability: 'balance',
      mode: 'state',
      trigger: 'api',
      outcome: 'ok',
      error_code: null,
      error: null,
      attempts: 2,
      retries: 1,
    });
    const phases = trace.phases as Array<{ name: string; offset_ms: number; duration_ms: number }>;
    expect(phases.map((p) => p.name)).toEqual(['accept', 'resolve', 'invoke', 'deliver']);
    // One after another: each begins where the previous ended.
    for (let i = 1; i < phases.length; i += 1) {
      expect(phases[i].offset_ms).toBeCloseTo(phases[i - 1].offset_ms + phases[i - 1].duration_ms, 1);
    }
    expect(phases[0].offset_ms).toBe(0);
    expect(phases.reduce((sum, p) => sum + p.duration_ms, 0)).toBeLessThanOrEqual(trace.duration_ms + 1);
  });

  it("shows a failed action with the runtime's error code and message, and the request id the runtime received", async () => {
    expect(failedId).toMatch(/^req_/);
    const calls = runtime.requestsTo('/capabilities/transfer/execute');
    expect(calls).toHaveLength(1);
    expect(calls[0].claims?.rid).toBe(failedId);
    const res = await execution(failedId).expect(200);
    expect(res.body).toMatchObject({
      request_id: failedId,
      capability: 'transfer',
      mode: 'action',
      trigger: 'confirmation',
      outcome: 'failed',
      error_code: 'CONFLICT',
      attempts: 1,
      retries: 0,
      error: { code: 'CONFLICT', message: expect.stringContaining('transfer already booked'), retries_exhausted: false },
    });
    // A confirmed action starts at resolve: its accept phase was the earlier, pending call.
    expect((res.body.phases as Array<{ name: string }>).map((p) => p.name)).toEqual(['resolve', 'invoke', 'deliver']);
  });

  it('filters by outcome, error code, capability, install, package, app and time, newest first', async () => {
    const failed = await executions({ outcome: 'failed' }).expect(200);
    expect(ids(failed)).toEqual([failedId]);
    expect(ids(await executions({ error_code: 'CONFLICT' }).expect(200))).toEqual([failedId]);
    expect(ids(await executions({ error_code: 'INTERNAL_ERROR' }).expect(200))).toEqual([]);

    const balance = (await executions({ capability: 'balance' }).expect(200)).body.executions as Execution[];
    expect(balance.map((e) => e.request_id)).toContain(okId);
    expect(balance.every((e) => e.capability === 'balance')).toBe(true);
    const transfers = (await executions({ capability: 'transfer' }).expect(200)).body.executions as Execution[];
    expect(transfers.map((e) => e.outcome).sort()).toEqual(['failed', 'pending']);

    const all = (await executions({ limit: 100 }).expect(200)).body.executions as Execution[];
    expect(all.every((e) => e.install_id === installId && e.package_id === packageId && e.app_id === appId)).toBe(true);
    expect(ids(await executions({ install_id: installId, limit: 100 }).expect(200))).toEqual(all.map((e) => e.request_id));
    expect(ids(await executions({ package_id: packageId, limit: 100 }).expect(200))).toEqual(all.map((e) => e.request_id));
    expect(ids(await executions({ app_id: appId, limit: 100 }, developer.auth).expect(200))).toEqual(all.map((e) => e.request_id));
    expect(ids(await executions({ install_id: 'inst_0000000000000000000000' }).expect(200))).toEqual([]);
    const times = all.map((e) => Date.parse(e.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const pivot = all.find((e) => e.request_id === okId)!;
    const until = ids(await executions({ until: pivot.created_at, limit: 100 }).expect(200));
    const since = ids(await executions({ since: pivot.created_at, limit: 100 }).expect(200));
    expect(since).toContain(okId);
    expect(until).not.toContain(okId);
    expect([...since, ...until].sort()).toEqual(all.map((e) => e.request_id).sort());
  });

  it('pages with the cursor with no gap and no duplicate, also across calls in the same millisecond', async () => {
    // Five copies of the state call's trace, all in one millisecond but apart by microseconds, as a busy install makes.
    await dataSource.query(
      `INSERT INTO capability_executions (id, install_id, user_id, app_id, package_id, capability, mode, trigger, outcome, error_code,
                                          error_message, attempts, retries_exhausted, phases, duration_ms, created_at)
       SELECT 'req_' || lpad(n::text, 22, 'M'), install_id, user_id, app_id, package_id, capability, mode, 'poll', outcome, error_code,
              error_message, attempts, retries_exhausted, phases, duration_ms, date_trunc('milliseconds', now()) + n * interval '1 microsecond'
         FROM capability_executions, generate_series(1, 5) AS n WHERE id = $1`,
      [okId],
    );
    const all = ids(await executions({ limit: 100 }).expect(200));
    expect(all.length).toBeGreaterThanOrEqual(8);
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const res: request.Response = await executions(cursor ? { limit: 2, cursor } : { limit: 2 }).expect(200);
      paged.push(...ids(res));
      cursor = res.body.next_cursor as string | null;
    } while (cursor);
    expect(paged).toEqual(all);
    await dataSource.query(`DELETE FROM capability_executions WHERE id LIKE 'req_MMMM%'`);
  });

  it("answers 404 for another developer's request id and lists none of their executions", async () => {
    const other = await onboardDeveloper(url, smtp, 'other-executions@example.com');
    const res = await execution(okId, other.auth).expect(404);
    expect(res.body.type).toBe(problemType('not_found'));
    expect((await executions({}, other.auth).expect(200)).body).toEqual({ executions: [], next_cursor: null });
    const refused = await executions({ app_id: appId }, other.auth).expect(403);
    expect(refused.body.type).toBe(problemType('insufficient_scope'));

    // Another app of the same developer sees none of this app's traces.
    const sibling = await registerApp(url, developer, { name: 'Acme Sibling' });
    const siblingAuth = { authorization: `Bearer ${await appToken(url, sibling)}` };
    await execution(okId, siblingAuth).expect(404);
    expect((await executions({}, siblingAuth).expect(200)).body.executions).toEqual([]);
    // The developer's console token sees both apps' traces.
    expect(ids(await executions({ limit: 100 }, developer.auth).expect(200))).toContain(failedId);
  });

  it('needs packages:read on an app token', async () => {
    const narrow = {
      authorization: `Bearer ${await appToken(url, { ...(await registerApp(url, developer, { name: 'Narrow' })) }, 'webhooks:read')}`,
    };
    const res = await executions({}, narrow).expect(403);
    expect(res.body.type).toBe(problemType('insufficient_scope'));
    await execution(okId, narrow).expect(403);
    await request(url).get('/v1/providers/executions').expect(401);
    // A user's token is not a platform token.
    await request(url).get('/v1/providers/executions').set(user.auth).expect(401);
  });

  it('refuses hostile filters with 400 problem details, and an unknown request id with 404', async () => {
    const hostile: Array<Record<string, string | number>> = [
      { outcome: 'exploded' },
      { package_id: 'pkg_short' },
      { install_id: "inst_' OR 1=1 --" },
      { capability: 'x'.repeat(129) },
      { capability: 'bal ance' },
      { error_code: '<script>' },
      { since: 'last week' },
      { cursor: 'garbage' },
      { limit: 1000 },
    ];
    for (const query of hostile) {
      const res = await executions(query);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
    await execution('req_0000000000000000000000').expect(404);
    await execution('evt_0000000000000000000000').expect(404);
  });
});
