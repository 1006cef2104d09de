import { INestApplicationContext } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import Redis from 'ioredis';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { TestIdentityProvider } from '../support/identity-provider';
import { TestEnvironment } from '../support/harness';
import { ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';
import { StatePoller } from '../../src/modules/runtime-bridge/state-poller';

const described = (type: string, description: string, extra: Record<string, unknown> = {}) => ({ type, description, ...extra });
const answerSchema = {
  type: 'object',
  properties: {
    available: described('number', 'Money available.'),
    currency: described('string', 'ISO 4217 code.'),
    open: described('integer', 'Open tickets.'),
    queue: described('string', 'The queue the figures are for.'),
  },
};

/**
 * A support desk package: `queue_stats` (state, a `queue` param defaulting to
 * `support`, on home and in the brief, with a title and field presentation),
 * `account_balance` (state, requires `account` and gives no default: no widget
 * params) and `digest` (state, in the daily brief only).
 */
function deskCapabilities(): unknown[] {
  return [
    {
      type: 'state',
      name: 'queue_stats',
      description: 'Open tickets of one queue.',
      refreshInterval: 300,
      schema: {
        type: 'object',
        properties: { queue: described('string', 'Which queue.', { enum: ['support', 'billing'], default: 'support' }) },
        additionalProperties: false,
      },
      responseSchema: answerSchema,
      surfaceGuidance: {
        intent: 'ambient_context',
        placement: ['home_widgets', 'daily_brief'],
        preferredComponents: ['stat_row', 'sparkline'],
        title: 'Open tickets',
        fields: { open: { label: 'Open now', unit: 'tickets', format: 'integer' }, queue: { hidden: true } },
      },
    },
    {
      type: 'state',
      name: 'account_balance',
      description: 'Balance of an account the caller names.',
      refreshInterval: 300,
      schema: {
        type: 'object',
        properties: { account: described('string', 'Which account.', { enum: ['checking', 'savings'] }) },
        required: ['account'],
        additionalProperties: false,
      },
      responseSchema: answerSchema,
      surfaceGuidance: { intent: 'ambient_context', placement: ['home_widgets'], preferredComponents: ['stat_row'] },
    },
    {
      type: 'state',
      name: 'digest',
      description: 'What changed since yesterday.',
      refreshInterval: 300,
      schema: { type: 'object', properties: {} },
      responseSchema: answerSchema,
      surfaceGuidance: { intent: 'ambient_context', placement: ['daily_brief'], preferredComponents: ['stat_row'] },
    },
  ];
}

type Component = { capability: { name: string }; data: unknown; params?: unknown; [key: string]: unknown };

/**
 * What a user sees is what the provider meant (issue 24): widgets show the
 * data of stable params (the schema's defaults), a user's one-off call never
 * changes them, the descriptor’s
 * title and field presentation reach the app, and the daily brief does not
 * repeat the home widgets.
 */
describe('faithful widgets: surfaces show what the provider meant', () => {
  let worker: INestApplicationContext;
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let dataSource: DataSource;
  let user: LoggedInUser;
  let other: LoggedInUser;
  let packageId: string;
  let installId: string;

  const execute = (capability: string, params: Record<string, unknown>, auth = user.auth) =>
    request(url).post(`/v1/providers/packages/${packageId}/capabilities/${capability}/execute`).set(auth).send({ params });
  const surface = async (placement: string, who = user): Promise<Component[]> =>
    (await request(url).get(`/v1/surfaces/${placement}`).set(who.auth).expect(200)).body.components;
  const widget = async (name: string, placement = 'home_widgets') => (await surface(placement)).find((c) => c.capability.name === name);

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start({ capabilities: deskCapabilities() });
    env = await TestEnvironment.create({
      SMTP_URL: smtp.url,
      ...idp.env,
      RUNTIME_TIMEOUT_MS: '1500',
      RUNTIME_RETRY_BASE_MS: '20',
      RUNTIME_RETRY_BUDGET_MS: '3000',
    });
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    // The poll tick runs hourly (once at start): a poll seconds after an install can only be the install's own trigger.
    worker = await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' } });
    const developer = await onboardDeveloper(url, smtp, 'desk@example.com');
    const app = await registerApp(url, developer);
    const appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    user = await login(url, idp, { sub: 'uid-faithful', name: 'Faith Ful', email: 'faithful@example.com' });
    other = await login(url, idp, { sub: 'uid-faithful-2', name: 'Other User', email: 'faithful-2@example.com' });
    ({ packageId } = await publishPackage(url, appAuth, {
      appId: app.id,
      name: 'Desk',
      slug: 'desk',
      description: 'Support desk figures',
      riskTier: 'data_only',
      runtimeUrl: runtime.url,
      capabilities: deskCapabilities(),
    }));
  }, 90_000);

  afterAll(async () => {
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  afterEach(() => {
    runtime.script.length = 0;
  });

  it('polls an install’s widgets with the schema defaults, through the worker', async () => {
    runtime.clearRequests();
    installId = (await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201)).body.id;
    // Not in the request: the install answers before any runtime call. One tick of the (otherwise hourly) poller.
    expect(runtime.requestsTo('/capabilities/queue_stats/execute')).toHaveLength(0);
    await worker.get(StatePoller, { strict: false }).pollDue();
    const first = await waitFor(
      async () => {
        const found = await widget('queue_stats');
        return found?.data ? found : undefined;
      },
      { what: 'the first state of the new install', timeoutMs: 10_000 },
    );
    expect(first).toMatchObject({
      params: { queue: 'support' },
      data: { available: 1520.75, currency: 'EUR' },
      title: 'Open tickets',
      component: 'stat_row',
      components: ['stat_row', 'sparkline'],
      fields: { open: { label: 'Open now', unit: 'tickets', format: 'integer' }, queue: { hidden: true } },
      stale: false,
    });
    const polls = runtime.requestsTo('/capabilities/queue_stats/execute');
    expect(polls.map((p) => (p.body as { params: unknown }).params)).toEqual([{ queue: 'support' }]);
    // A read's trace is written after its answer (ExecutionTraces.recordAfterAnswer): wait for it.
    const traces = await waitFor(
      async () => {
        const rows: unknown[] = await dataSource.query(
          `SELECT trigger FROM capability_executions WHERE install_id = $1 AND capability = 'queue_stats'`,
          [installId],
        );
        return rows.length > 0 ? rows : undefined;
      },
      { what: 'the poll traced' },
    );
    expect(traces).toEqual([{ trigger: 'poll' }]);

    // The same first poll fetches the brief's digest (and nothing polls after it: the scripted answers below are the calls').
    await waitFor(async () => ((await widget('digest', 'daily_brief'))?.data ? true : undefined), {
      what: 'the digest polled',
      timeoutMs: 10_000,
    });

    // Required params without a default: no widget params, never polled, said so in the model.
    const unpolled = await widget('account_balance');
    expect(unpolled).toMatchObject({ params: null, data: null });
    expect(runtime.requestsTo('/capabilities/account_balance/execute')).toHaveLength(0);
  });

  it('keeps showing the default params after the user calls the capability with other params', async () => {
    runtime.clearRequests();
    runtime.scriptNext({ status: 200, body: { status: 'ok', data: { queue: 'billing', open: 99 }, ttl: 300 } });
    const call = await execute('queue_stats', { queue: 'billing' }).expect(200);
    expect(call.body.data).toEqual({ queue: 'billing', open: 99 });
    expect(runtime.requestsTo('/capabilities/queue_stats/execute')).toHaveLength(1);

    // The widget still shows the support queue, and keeps doing so on every later read.
    for (let read = 0; read < 2; read++) {
      expect(await widget('queue_stats')).toMatchObject({ params: { queue: 'support' }, data: { available: 1520.75, currency: 'EUR' } });
    }
    // The brief and the other user's surfaces are not changed either.
    expect(await surface('home_widgets', other)).toEqual([]);

    // A call with the widget's own params is fresher data for the widget: it shows.
    runtime.scriptNext({ status: 200, body: { status: 'ok', data: { queue: 'support', open: 7 }, ttl: 300 } });
    await execute('queue_stats', { queue: 'support' }).expect(200);
    expect(await widget('queue_stats')).toMatchObject({ data: { queue: 'support', open: 7 } });

    // And billing again: the support widget stays.
    runtime.scriptNext({ status: 200, body: { status: 'ok', data: { queue: 'billing', open: 100 }, ttl: 300 } });
    await execute('queue_stats', { queue: 'billing' }).expect(200);
    expect(await widget('queue_stats')).toMatchObject({ data: { queue: 'support', open: 7 } });
  });

  it('keeps the next polls on the default params whatever the user called last', async () => {
    // The user's last call was for billing. Make their widget due now (as if its interval had passed): the next poll,
    // triggered by another user's install, refreshes it, with the defaults.
    const redis = new Redis(env.env.REDIS_URL);
    try {
      await redis.del(
        `${env.env.REDIS_PREFIX}:state-poll:${installId}:queue_stats`,
        `${env.env.REDIS_PREFIX}:state-widget:${installId}:queue_stats`,
      );
    } finally {
      redis.disconnect();
    }
    runtime.clearRequests();
    await request(url).post('/v1/installs').set(other.auth).send({ package_id: packageId }).expect(201);
    await worker.get(StatePoller, { strict: false }).pollDue();
    const polls = await waitFor(
      () => {
        const seen = runtime.requestsTo('/capabilities/queue_stats/execute');
        const mine = seen.filter((r) => r.headers['x-service-user-id'] === user.id);
        return mine.length >= 1 && seen.length >= 2 ? seen : undefined;
      },
      { what: 'polls of both installs after a tick', timeoutMs: 10_000 },
    );
    for (const poll of polls) expect((poll.body as { params: unknown }).params).toEqual({ queue: 'support' });
    expect(await widget('queue_stats')).toMatchObject({ params: { queue: 'support' }, data: { available: 1520.75, currency: 'EUR' } });
  });

  it('leaves the home widgets out of the daily brief', async () => {
    await waitFor(async () => ((await widget('digest', 'daily_brief'))?.data ? true : undefined), {
      what: 'the digest polled',
      timeoutMs: 10_000,
    });
    const brief = await surface('daily_brief');
    expect(brief.map((c) => c.capability.name)).toEqual(['digest']);
    expect((await surface('home_widgets')).map((c) => c.capability.name).sort()).toEqual(['account_balance', 'queue_stats']);
  });

  it('refuses surface presentation a renderer cannot honour, naming the field', async () => {
    const bad = deskCapabilities().map((c, i) =>
      i === 0
        ? {
            ...(c as Record<string, unknown>),
            surfaceGuidance: { placement: ['home_widgets'], fields: { open: { format: 'hexadecimal' } } },
          }
        : c,
    );
    const developer = await onboardDeveloper(url, smtp, 'desk-bad@example.com');
    const app = await registerApp(url, developer);
    const appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    const res = await request(url)
      .post('/v1/providers/packages')
      .set(appAuth)
      .send({
        appId: app.id,
        name: 'Bad Desk',
        slug: 'bad-desk',
        description: 'x',
        riskTier: 'data_only',
        runtimeUrl: runtime.url,
        capabilities: bad,
      })
      .expect(400);
    expect(JSON.stringify(res.body)).toContain('capabilities[0].surfaceGuidance.fields.open.format');
  });
});
