import { INestApplicationContext } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import Redis from 'ioredis';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { TestIdentityProvider } from '../support/identity-provider';
import { TestEnvironment } from '../support/harness';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';

const problemType = (code: string) => `https://docs.example.com/developers/errors#${code}`;
const envelope = (code: string, message: string, retryable: boolean, retryAfter?: number) => ({
  status: 'error',
  error: { code, message, retryable, ...(retryAfter !== undefined ? { retryAfter } : {}) },
});
const described = (type: string, description: string, extra: Record<string, unknown> = {}) => ({ type, description, ...extra });

/** A descriptor of the shared good package without the fields the spec does not have. */
function specOnly(capability: unknown): unknown {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- dropped on purpose
  const { responseSchema, examples, ...rest } = capability as Record<string, unknown>;
  return rest;
}

/**
 * A package written with the spec's descriptor fields only: no `responseSchema`,
 * no `examples`. Its state capability's `schema` describes both the params and
 * the `data` (the spec: "params (object, per schema)", "data (object per schema)").
 */
function specOnlyCapabilities(): unknown[] {
  return [
    {
      type: 'state',
      name: 'quote',
      description: 'Available balance and its currency, polled every second for the tests.',
      refreshInterval: 1,
      schema: {
        type: 'object',
        properties: {
          available: described('number', 'Money available to spend.'),
          currency: described('string', 'ISO 4217 currency code.', { enum: ['EUR', 'USD'] }),
        },
      },
      surfaceGuidance: { intent: 'ambient_context', placement: ['home_widgets'], preferredComponents: ['stat_row'] },
    },
    specOnly(goodPackageCapabilities().find((c) => (c as { name: string }).name === 'transfer')),
    {
      type: 'history',
      name: 'transactions',
      description: 'Booked transactions of one account, newest first.',
      schema: {
        type: 'object',
        properties: { account: described('string', 'Which account to list.', { enum: ['checking', 'savings'] }) },
        required: ['account'],
      },
      surfaceGuidance: { intent: 'deep_dive', placement: ['service_context'], preferredComponents: ['ranked_list'] },
    },
  ];
}

/**
 * The bridge's side of the capability contract (issue 18): params and input
 * checked against the declared schema before any runtime call, answers checked
 * against it after; a derived idempotency key for actions; the retry-budget
 * rule; state polling of every install from install time.
 */
describe('runtime bridge: the capability contract', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let dataSource: DataSource;
  let appAuth: { authorization: string };
  let user: LoggedInUser;
  let other: LoggedInUser;
  let packageId: string;
  let installId: string;
  let quietWorker: INestApplicationContext;

  const execute = (capability: string, body: Record<string, unknown> = {}, auth = user.auth) =>
    request(url).post(`/v1/providers/packages/${packageId}/capabilities/${capability}/execute`).set(auth).send(body);
  const transfer = { toAccount: 'DE89370400440532013000', amount: 25, currency: 'EUR' };
  const confirmationCount = async () =>
    Number((await dataSource.query(`SELECT count(*)::int AS n FROM action_confirmations WHERE install_id = $1`, [installId]))[0].n);

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start({ capabilities: specOnlyCapabilities() });
    env = await TestEnvironment.create({
      SMTP_URL: smtp.url,
      ...idp.env,
      RUNTIME_TIMEOUT_MS: '1500',
      RUNTIME_RETRY_BASE_MS: '20',
      RUNTIME_RETRY_BUDGET_MS: '5000',
      RUNTIME_TICK_MS: '100',
    });
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    // This worker (mail, outbox) ticks the state poller only hourly, so nothing polls while the API tests script the
    // runtime's answers; the polling tests swap in a fast-ticking worker.
    quietWorker = await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' } });
    const developer = await onboardDeveloper(url, smtp, 'contract@example.com');
    const app = await registerApp(url, developer);
    appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    user = await login(url, idp, { sub: 'uid-contract', name: 'Contract User', email: 'contract-user@example.com' });
    other = await login(url, idp, { sub: 'uid-contract-2', name: 'Second User', email: 'contract-user-2@example.com' });
    ({ packageId } = await publishPackage(url, appAuth, {
      appId: app.id,
      name: 'Spec Only Bank',
      slug: 'spec-only-bank',
      description: 'A package declaring the spec fields only',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      capabilities: specOnlyCapabilities(),
    }));
    runtime.clearRequests();
    installId = (await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201)).body.id;
    // The install fetches its first state at once (docs/components.md): let that poll pass, then forget it and its
    // cached answer, so the tests below script every runtime answer themselves.
    await waitFor(
      async () =>
        (await dataSource.query(`SELECT 1 FROM capability_executions WHERE install_id = $1 AND trigger = 'poll'`, [installId])).length >
          0 || undefined,
      { what: 'the install’s first poll', timeoutMs: 10_000 },
    );
    const redis = new Redis(env.env.REDIS_URL);
    try {
      await redis.del(`${env.env.REDIS_PREFIX}:state:${installId}:quote`, `${env.env.REDIS_PREFIX}:state-widget:${installId}:quote`);
    } finally {
      redis.disconnect();
    }
    runtime.clearRequests();
  }, 60_000);

  afterAll(async () => {
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  afterEach(() => {
    runtime.script.length = 0;
  });

  describe('params and input against the declared schema', () => {
    it('refuses a params value outside the declared enum with invalid_format naming the field, before calling the runtime', async () => {
      runtime.clearRequests();
      const res = await execute('quote', { params: { currency: 'GBP' } }).expect(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        type: problemType('invalid_format'),
        status: 400,
        field: 'params.currency',
        schema_path: '$.properties.currency',
        detail: expect.stringContaining('params.currency must be one of: "EUR", "USD"'),
      });
      const wrongType = await execute('quote', { params: { available: 'lots' } }).expect(400);
      expect(wrongType.body).toMatchObject({ type: problemType('invalid_format'), field: 'params.available' });
      expect(runtime.requestsTo('/capabilities/quote/execute')).toHaveLength(0);
    });

    it('refuses action input without a required field with missing_field, creating no confirmation', async () => {
      runtime.clearRequests();
      const before = await confirmationCount();
      const res = await execute('transfer', { input: { toAccount: transfer.toAccount, currency: 'EUR' } }).expect(400);
      expect(res.body).toMatchObject({
        type: problemType('missing_field'),
        title: 'Missing Required Field',
        field: 'input.amount',
        schema_path: '$.properties.amount',
      });
      const extra = await execute('transfer', { input: { ...transfer, memo: 'x' } }).expect(400);
      expect(extra.body).toMatchObject({ type: problemType('invalid_format'), field: 'input.memo' });
      const tooMuch = await execute('transfer', { input: { ...transfer, amount: 10_000.5 } }).expect(400);
      expect(tooMuch.body).toMatchObject({ type: problemType('invalid_format'), field: 'input.amount' });
      expect(await confirmationCount()).toBe(before);
      expect(runtime.requestsTo('/capabilities/transfer/execute')).toHaveLength(0);
    });

    it('refuses hostile params (operator objects, nested junk) with invalid_format and never reaches the runtime', async () => {
      runtime.clearRequests();
      for (const params of [{ currency: { $gt: '' } }, { currency: ['EUR'] }, { available: { __proto__: { polluted: true } } }]) {
        const res = await execute('quote', { params }).expect(400);
        expect(res.body.type).toBe(problemType('invalid_format'));
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(runtime.requestsTo('/capabilities/quote/execute')).toHaveLength(0);
    });

    it('allows the history paging fields the schema does not declare, and checks them by the contract’s types', async () => {
      const res = await execute('transactions', { params: { account: 'checking', limit: 5, direction: 'backward' } }).expect(200);
      expect(res.body.items).toHaveLength(5);
      const bad = await execute('transactions', { params: { account: 'checking', limit: 'five' } }).expect(400);
      expect(bad.body).toMatchObject({ type: problemType('invalid_format'), field: 'params.limit' });
      const missing = await execute('transactions', { params: { limit: 5 } }).expect(400);
      expect(missing.body).toMatchObject({ type: problemType('missing_field'), field: 'params.account' });
    });

    it('checks the runtime’s data against the schema of a package with no responseSchema: execution_failed naming the field', async () => {
      runtime.scriptNext({ status: 200, body: { status: 'ok', data: { available: 'lots', currency: 'EUR' }, ttl: 60 } });
      const res = await execute('quote', { params: {} }).expect(500);
      expect(res.body).toMatchObject({ type: problemType('execution_failed'), field: 'data.available' });
      const [trace] = await dataSource.query(`SELECT outcome, error_code FROM capability_executions WHERE id = $1`, [res.body.request_id]);
      expect(trace).toEqual({ outcome: 'failed', error_code: 'execution_failed' });
      runtime.scriptNext({ status: 200, body: { status: 'ok', data: { available: 3, currency: 'GBP' }, ttl: 60 } });
      const outside = await execute('quote', { params: {} }).expect(500);
      expect(outside.body).toMatchObject({ type: problemType('execution_failed'), field: 'data.currency' });
      const good = await execute('quote', { params: {} }).expect(200);
      expect(good.body.data).toEqual({ available: 1520.75, currency: 'EUR' });
    });
  });

  describe('derived idempotency key', () => {
    it('answers a retry without a key with the same confirmation, and the runtime gets the derived key once confirmed', async () => {
      runtime.clearRequests();
      const input = { ...transfer, amount: 31 };
      const first = await execute('transfer', { input }).expect(202);
      // The same input with its keys in another order is the same canonical input.
      const retry = await execute('transfer', { input: { currency: 'EUR', amount: 31, toAccount: transfer.toAccount } }).expect(202);
      expect(retry.body.confirmationId).toBe(first.body.confirmationId);
      expect(first.body.idempotencyKey).toMatch(/^idem_/);
      const different = await execute('transfer', { input: { ...input, amount: 32 } }).expect(202);
      expect(different.body.confirmationId).not.toBe(first.body.confirmationId);

      await request(url).post(`/v1/actions/${first.body.confirmationId}/confirm`).set(user.auth).expect(200);
      const afterConfirm = await execute('transfer', { input }).expect(202);
      expect(afterConfirm.body).toMatchObject({ confirmationId: first.body.confirmationId, status: 'completed' });
      const calls = runtime.requestsTo('/capabilities/transfer/execute');
      expect(calls).toHaveLength(1);
      expect(calls[0].headers['x-service-idempotency-key']).toBe(first.body.idempotencyKey);
    });

    it('creates one confirmation for concurrent retries of the same call', async () => {
      const input = { ...transfer, amount: 41 };
      const before = await confirmationCount();
      const answers = await Promise.all(Array.from({ length: 6 }, () => execute('transfer', { input })));
      expect(answers.map((a) => a.status)).toEqual(Array(6).fill(202));
      expect(new Set(answers.map((a) => a.body.confirmationId)).size).toBe(1);
      expect(await confirmationCount()).toBe(before + 1);
    });

    it('derives different keys for different callers on the same install (user token, app token)', async () => {
      const input = { ...transfer, amount: 51 };
      const byUser = await execute('transfer', { input }).expect(202);
      const byApp = await execute('transfer', { input, installId }, appAuth).expect(202);
      expect(byApp.body.confirmationId).not.toBe(byUser.body.confirmationId);
      // An explicit key still wins over the derived one.
      const keyed = await execute('transfer', { input, idempotencyKey: 'contract-explicit-1' }).expect(202);
      expect(keyed.body).toMatchObject({ idempotencyKey: 'contract-explicit-1' });
      expect(keyed.body.confirmationId).not.toBe(byUser.body.confirmationId);
    });

    it('keeps the derived key to the caller’s own install: another user cannot reach this install', async () => {
      const res = await execute('transfer', { input: transfer }, other.auth).expect(404);
      expect(res.body.type).toBe(problemType('not_found'));
    });
  });

  describe('retry budget of a synchronous call', () => {
    it('answers at once with 429 and Retry-After when the runtime’s retryAfter is longer than the request can wait', async () => {
      runtime.clearRequests();
      runtime.scriptNext({ status: 429, body: envelope('RATE_LIMITED', 'slow down', true, 60) });
      const started = Date.now();
      const res = await execute('quote', { params: { currency: 'USD' } }).expect(429);
      expect(Date.now() - started).toBeLessThan(3000);
      expect(res.headers['retry-after']).toBe('60');
      expect(res.body).toMatchObject({
        type: problemType('rate_limit_exceeded'),
        retryable: true,
        retry_after: 60,
        runtime_error: { code: 'RATE_LIMITED', retryAfter: 60 },
      });
      expect(runtime.requestsTo('/capabilities/quote/execute')).toHaveLength(1);
      const [trace] = await dataSource.query(`SELECT outcome, retries_exhausted FROM capability_executions WHERE id = $1`, [
        res.body.request_id,
      ]);
      expect(trace).toEqual({ outcome: 'failed', retries_exhausted: false });
    });

    it('answers a deferred INTERNAL_ERROR as a retryable 503 with Retry-After capped at the 5-minute maximum delay', async () => {
      runtime.scriptNext({ status: 500, body: envelope('INTERNAL_ERROR', 'maintenance', true, 3600) });
      const res = await execute('quote', { params: { currency: 'EUR' } }).expect(503);
      expect(res.headers['retry-after']).toBe('300');
      expect(res.body).toMatchObject({ type: problemType('service_unavailable'), retryable: true, retry_after: 300 });
    });

    it('keeps a confirmation the runtime deferred pending: the user confirms again later and the runtime gets the same key', async () => {
      runtime.clearRequests();
      const created = await execute('transfer', { input: { ...transfer, amount: 41 } }).expect(202);
      const id = created.body.confirmationId as string;
      runtime.scriptNext({ status: 429, body: envelope('RATE_LIMITED', 'slow down', true, 60) });
      const deferred = await request(url).post(`/v1/actions/${id}/confirm`).set(user.auth).expect(429);
      expect(deferred.headers['retry-after']).toBe('60');
      const [{ status }] = await dataSource.query(`SELECT status FROM action_confirmations WHERE id = $1`, [id]);
      expect(status).toBe('pending');

      const done = await request(url).post(`/v1/actions/${id}/confirm`).set(user.auth).expect(200);
      expect(done.body.status).toBe('completed');
      const calls = runtime.requestsTo('/capabilities/transfer/execute');
      expect(calls).toHaveLength(2);
      expect(calls[1].headers['x-service-idempotency-key']).toBe(calls[0].headers['x-service-idempotency-key']);
    });

    it('still waits in the request for a retryAfter that fits in the budget', async () => {
      runtime.scriptNext({ status: 503, body: envelope('UPSTREAM_UNAVAILABLE', 'blip', true, 1) });
      const started = Date.now();
      const res = await execute('quote', { params: { available: 1 } }).expect(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      expect(res.body.status).toBe('ok');
    });
  });

  describe('state polling of installed capabilities (worker)', () => {
    let pollingInstall: string;
    const pollsFor = (userId: string) =>
      runtime.requestsTo('/capabilities/quote/execute').filter((r) => r.headers['x-service-user-id'] === userId);

    beforeAll(async () => {
      // The first user's install leaves, so only the second user's install is polled below.
      await request(url).delete(`/v1/installs/${installId}`).set(user.auth).expect(200);
      await quietWorker.close();
      await env.startWorker();
    });

    it('polls a state capability from install time, with no call made and no example declared, every refreshInterval', async () => {
      runtime.clearRequests();
      pollingInstall = (await request(url).post('/v1/installs').set(other.auth).send({ package_id: packageId }).expect(201)).body.id;
      const [first] = await waitFor(() => (pollsFor(other.id).length >= 1 ? pollsFor(other.id) : undefined), {
        what: 'a first poll after install',
        timeoutMs: 20_000,
      });
      expect(first.body).toEqual({
        capability: 'quote',
        mode: 'state',
        params: {},
        context: { userId: other.id, installId: pollingInstall, locale: 'en', timezone: 'UTC' },
      });
      await waitFor(() => pollsFor(other.id).length >= 2 || undefined, { what: 'a second poll one interval later', timeoutMs: 20_000 });
      const traces = await dataSource.query(`SELECT outcome FROM capability_executions WHERE install_id = $1 AND trigger = 'poll'`, [
        pollingInstall,
      ]);
      expect(traces.length).toBeGreaterThanOrEqual(1);
      expect(traces[0].outcome).toBe('ok');
      const cached = await request(url).get('/v1/surfaces/home_widgets').set(other.auth).expect(200);
      expect(cached.body.components).toEqual(
        expect.arrayContaining([expect.objectContaining({ data: { available: 1520.75, currency: 'EUR' } })]),
      );
    }, 60_000);

    it('lets a queued poll wait the runtime’s full retryAfter instead of failing, then polls again', async () => {
      runtime.clearRequests();
      runtime.scriptNext({ status: 429, body: envelope('RATE_LIMITED', 'slow down', true, 3) });
      const failing = await waitFor(() => pollsFor(other.id)[0], { what: 'the poll that is told to wait', timeoutMs: 20_000 });
      const failedAt = Date.now();
      const next = await waitFor(() => pollsFor(other.id)[1], { what: 'the retried poll', timeoutMs: 20_000 });
      const waited = Date.now() - failedAt;
      expect(waited).toBeGreaterThanOrEqual(2500); // not the 1 s refreshInterval: the runtime's 3 s
      expect(next.headers['x-service-request-id']).not.toBe(failing.headers['x-service-request-id']);
      const [failedTrace] = await dataSource.query(
        `SELECT outcome, error_code, retries_exhausted FROM capability_executions WHERE id = $1`,
        [failing.headers['x-service-request-id']],
      );
      expect(failedTrace).toEqual({ outcome: 'failed', error_code: 'RATE_LIMITED', retries_exhausted: false });
    }, 60_000);

    it('stops polling an install once it is uninstalled', async () => {
      await waitFor(() => pollsFor(other.id).length >= 1 || undefined, { what: 'polling to run', timeoutMs: 20_000 });
      await request(url).delete(`/v1/installs/${pollingInstall}`).set(other.auth).expect(200);
      // A poll already in flight may still land: count from a moment after the uninstall.
      await new Promise((r) => setTimeout(r, 300));
      runtime.clearRequests();
      await new Promise((r) => setTimeout(r, 2500));
      expect(pollsFor(other.id)).toHaveLength(0);
    }, 60_000);
  });
});
