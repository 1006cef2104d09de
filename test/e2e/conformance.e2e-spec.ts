import { createHmac } from 'node:crypto';
import request from 'supertest';
import { ConformanceModule } from '../../src/modules/conformance/conformance.module';
import { ConformanceInput, ConformanceRunner } from '../../src/modules/conformance/conformance-runner';
import { ConformanceReport, DIMENSIONS, submissionFault } from '@soul-service/rules';
import { normaliseCapabilities } from '../../src/modules/descriptors/descriptor-normalizer';
import { TestEnvironment } from '../support/harness';
import { goodPackageCapabilities, LEAKED_AWS_KEY_ID, ProviderRuntime, RecordedRequest } from '../support/provider-runtime';
import { appToken, onboardDeveloper, OnboardedDeveloper, RegisteredApp, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { waitFor } from '../support/wait-for';

const ID = (prefix: string) => new RegExp(`^${prefix}_[0-9A-Za-z]{22}$`);
/** A runtime token (docs/runtime-auth.md): a compact JWS. */
const TOKEN = /^Bearer (eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/;
const TEST_ID = (prefix: string) => new RegExp(`^${prefix}_test[0-9A-Za-z]{18}$`);
/** The app whose runtime this file's runner calls directly: the audience of its tokens. */
const APP_ID = 'app_conformanceE2eApp00000';

function check(report: ConformanceReport, id: string) {
  const found = DIMENSIONS.flatMap((k) => report.dimensions[k].checks).find((c) => c.id === id);
  if (!found) throw new Error(`no check ${id} in ${JSON.stringify(report)}`);
  return found;
}

/** Failed scored checks; warnings (worth no points) are left out: the good package's balance widget has no default params. */
function failing(report: ConformanceReport): string[] {
  return DIMENSIONS.flatMap((k) => report.dimensions[k].checks)
    .filter((c) => !c.passed && !c.warning)
    .map((c) => c.id);
}

describe('conformance suite against a real HTTPS provider runtime', () => {
  let env: TestEnvironment;
  let runner: ConformanceRunner;
  let runtime: ProviderRuntime;
  let input: (overrides?: Partial<ConformanceInput>) => ConformanceInput;

  beforeAll(async () => {
    assertTestCaTrusted();
    env = await TestEnvironment.create();
    const { app } = await env.startApi({ imports: [ConformanceModule] });
    runner = app.get(ConformanceRunner);
    runtime = await ProviderRuntime.start();
    const capabilities = normaliseCapabilities(runtime.capabilities);
    input = (overrides = {}) => ({
      runtimeUrl: runtime.url,
      riskTier: 'action_capable',
      capabilities,
      full: true,
      appId: APP_ID,
      ...overrides,
    });
  });
  afterEach(async () => {
    await runtime.behave('conforming');
    runtime.clearRequests();
  });
  afterAll(async () => {
    await runtime?.close();
    await env?.close();
  });

  it('scores a conforming runtime 100 in a full run of all six dimensions and passes it', async () => {
    const report = await runner.run(input());
    expect(failing(report)).toEqual([]);
    expect(report).toMatchObject({ score: 100, passed: true, full: true });
    for (const key of DIMENSIONS) expect(report.dimensions[key]).toMatchObject({ ran: true, score: report.dimensions[key].max });
    expect(submissionFault(report)).toBeNull();
  });

  it('validates locally (schema, contracts, documentation) without calling the runtime', async () => {
    const report = await runner.run(input({ full: false }));
    expect(report).toMatchObject({ score: 100, passed: true, full: false });
    expect(runtime.requests).toEqual([]);
  });

  it('sends a state call with the exact headers and body of the runtime contract', async () => {
    await runner.run(input());
    const [call] = runtime.requestsTo('/capabilities/balance/execute');
    expect(call.method).toBe('POST');
    expect(call.headers).toMatchObject({
      authorization: expect.stringMatching(TOKEN),
      'x-service-request-id': expect.stringMatching(ID('req')),
      'x-service-user-id': expect.stringMatching(TEST_ID('usr')),
      'x-service-livemode': 'false',
      'content-type': 'application/json',
      accept: 'application/json',
    });
    expect(call.headers['x-service-idempotency-key']).toBeUndefined();
    expect(call.body).toEqual({
      capability: 'balance',
      mode: 'state',
      params: { account: 'checking' },
      context: {
        userId: call.headers['x-service-user-id'],
        installId: expect.stringMatching(TEST_ID('inst')),
        locale: 'en-US',
        timezone: 'UTC',
      },
    });
    // Test traffic for the synthetic install and user, with the same kind of token as live calls.
    expect(call.claims).toMatchObject({
      aud: APP_ID,
      sub: call.headers['x-service-user-id'],
      uid: call.headers['x-service-user-id'],
      iid: (call.body as { context: { installId: string } }).context.installId,
      rid: call.headers['x-service-request-id'],
      livemode: false,
      scope: '',
    });
  });

  it('sends an action call with an idempotency key and the confirmation context, and no user header', async () => {
    await runner.run(input());
    const [call] = runtime.requestsTo('/capabilities/transfer/execute');
    expect(call.headers).toMatchObject({
      authorization: expect.stringMatching(TOKEN),
      'x-service-request-id': expect.stringMatching(ID('req')),
      'x-service-idempotency-key': expect.stringMatching(ID('idem')),
    });
    expect(call.headers['x-service-user-id']).toBeUndefined();
    expect(call.body).toEqual({
      capability: 'transfer',
      mode: 'action',
      input: { toAccount: 'DE89370400440532013000', amount: 25, currency: 'EUR', reference: 'Dinner' },
      context: { userId: expect.stringMatching(ID('usr')), confirmationId: expect.stringMatching(ID('act')) },
    });
  });

  it('reuses the idempotency key with a different input and expects 409 CONFLICT', async () => {
    const report = await runner.run(input());
    const calls = runtime.requestsTo('/capabilities/transfer/execute');
    const first = calls[0];
    const conflict = calls.find(
      (c) => c !== first && c.headers['x-service-idempotency-key'] === first.headers['x-service-idempotency-key'],
    ) as RecordedRequest;
    expect((conflict.body as { input: unknown }).input).not.toEqual((first.body as { input: unknown }).input);
    // Without a webhook endpoint (see the HTTP API tests below) the dimension is shared by three checks.
    expect(check(report, 'error_handling.idempotency_conflict')).toMatchObject({ passed: true, points: 4 });
  });

  it('pages history with limit, direction and then the opaque cursor the runtime returned', async () => {
    await runner.run(input());
    const [first, second] = runtime.requestsTo('/capabilities/transactions/execute');
    expect(first.headers['x-service-user-id']).toBeUndefined();
    expect(first.headers['x-service-idempotency-key']).toBeUndefined();
    expect(first.body).toEqual({
      capability: 'transactions',
      mode: 'history',
      params: { account: 'checking', limit: 10, direction: 'backward' },
      context: { userId: expect.stringMatching(ID('usr')), installId: expect.stringMatching(ID('inst')), locale: 'en-US', timezone: 'UTC' },
    });
    expect((second.body as { params: Record<string, unknown> }).params).toEqual({
      account: 'checking',
      limit: 10,
      direction: 'backward',
      cursor: expect.any(String),
    });
  });

  it('opens the realtime stream with Accept: text/event-stream and never calls a webhook-mode capability', async () => {
    const report = await runner.run(input());
    const [stream] = runtime.requestsTo('/capabilities/ticker/stream');
    expect(stream.method).toBe('GET');
    expect(stream.headers).toMatchObject({
      accept: 'text/event-stream',
      authorization: expect.stringMatching(TOKEN),
      'x-service-request-id': expect.stringMatching(ID('req')),
    });
    expect(check(report, 'contracts.realtime_stream')).toMatchObject({ passed: true });
    expect(runtime.requestsTo('/capabilities/meeting_updates')).toEqual([]);
  });

  it('sends a fresh token and a new request id with every call, for one synthetic install per run', async () => {
    await runner.run(input());
    const calls = runtime.requestsTo('/capabilities/');
    const tokens = new Set(calls.map((r) => r.headers.authorization).filter(Boolean));
    const ids = calls.map((r) => r.headers['x-service-request-id']);
    expect(tokens.size).toBe(calls.filter((r) => r.headers.authorization).length);
    expect(new Set(ids).size).toBe(ids.length);
    const verified = calls.filter((r) => r.claims);
    expect(new Set(verified.map((r) => r.claims!.iid)).size).toBe(1);
    expect(new Set(verified.map((r) => r.claims!.jti)).size).toBe(verified.length);
    for (const call of calls) expect(call.headers['x-service-livemode']).toBe('false');
    runtime.clearRequests();
    await runner.run(input());
    const [next] = runtime.requestsTo('/capabilities/balance/execute');
    expect(tokens.has(next.headers.authorization as string)).toBe(false);
    expect(next.claims!.iid).not.toBe(verified[0].claims!.iid);
  });

  it('lowers performance, and only performance, for a slow runtime', async () => {
    runtime.slowDelayMs = 2_000;
    await runtime.behave('slow');
    const report = await runner.run(input());
    expect(failing(report)).toEqual(['performance.p95_latency']);
    expect(check(report, 'performance.p95_latency').detail).toMatch(/^p95 2\d{3} ms over 10 state\/history calls/);
    expect(report.dimensions.performance.score).toBeLessThan(15);
    expect(report.passed).toBe(true);
  }, 60_000);

  it('blocks a runtime that leaks credentials: security below 5, not passed although the aggregate is 80 or more', async () => {
    await runtime.behave('leaks_secrets');
    const report = await runner.run(input());
    expect(failing(report)).toEqual(['security.no_credentials']);
    expect(report.score).toBeGreaterThanOrEqual(80);
    expect(report.dimensions.security.score).toBeLessThan(5);
    expect(report.passed).toBe(false);
    expect(submissionFault(report)).toBe('dimension_below_threshold');
    const { detail } = check(report, 'security.no_credentials');
    expect(detail).toContain('balance execute: response contains a bearer token the service sent, an AWS access key id');
    expect(detail).not.toContain(LEAKED_AWS_KEY_ID);
    expect(detail).not.toContain('eyJ');
  });

  it('fails contracts (and the latency of unusable answers) for a runtime with the wrong success envelopes', async () => {
    await runtime.behave('wrong_envelope');
    const report = await runner.run(input());
    expect(failing(report)).toEqual([
      'contracts.execute',
      'contracts.response_schema',
      'contracts.history_pagination',
      'performance.p95_latency',
    ]);
    expect(check(report, 'contracts.execute').detail).toContain(
      'balance (state): answered 200 but not with the success envelope: status is undefined',
    );
    expect(report).toMatchObject({ passed: false });
    expect(report.score).toBeLessThan(80);
    expect(submissionFault(report)).toBe('conformance_failed');
  });

  it('lowers error handling for a runtime that accepts invalid params', async () => {
    await runtime.behave('no_invalid_params');
    const report = await runner.run(input());
    expect(failing(report)).toEqual(['error_handling.invalid_params']);
    expect(check(report, 'error_handling.invalid_params').detail).toContain('balance with a wrong "account": answered 200');
    const invalid = runtime
      .requestsTo('/capabilities/transactions/execute')
      .find((r) => (r.body as { params: { limit: unknown } }).params.limit === 'ten');
    expect((invalid?.body as { params: Record<string, unknown> }).params).toMatchObject({ __invalid__: true });
    expect(report.dimensions.error_handling.score).toBe(8);
  });

  it('blocks a runtime that does not check bearer tokens: security below 5 whatever else it earned', async () => {
    await runtime.behave('no_auth_check');
    const report = await runner.run(input());
    expect(failing(report)).toEqual(['security.token_verification']);
    const unauthenticated = runtime.requestsTo('/capabilities/').filter((r) => r.headers.authorization === undefined);
    expect(unauthenticated).toHaveLength(1);
    const { detail } = check(report, 'security.token_verification');
    for (const probe of ['no Authorization', 'an expired token', 'a token signed by another key', 'a token for another app']) {
      expect(detail).toContain(`balance execute (${probe}): answered 200`);
    }
    expect(report.dimensions.security.score).toBe(4);
    expect(report.score).toBeGreaterThanOrEqual(80);
    expect(submissionFault(report)).toBe('dimension_below_threshold');
  });

  it('blocks a runtime that asks for a bearer token but accepts any: the expired, forged and other-app tokens get through', async () => {
    await runtime.behave('accepts_any_token');
    const report = await runner.run(input());
    expect(failing(report)).toEqual(['security.token_verification']);
    const found = check(report, 'security.token_verification');
    expect(found).toMatchObject({ passed: false, points: 0 });
    expect(found.detail).not.toContain('no Authorization');
    expect(found.detail).toContain('balance execute (a token signed by another key): answered 200');
    expect(report).toMatchObject({ passed: false });
    expect(report.dimensions.security.score).toBeLessThan(5);
  });

  it('fails the size check, and the answers it cut off, for responses over 256 KB', async () => {
    await runtime.behave('oversized');
    const report = await runner.run(input());
    expect(failing(report)).toEqual(expect.arrayContaining(['contracts.execute', 'performance.response_size', 'performance.p95_latency']));
    expect(check(report, 'performance.response_size').detail).toMatch(/^balance execute: response larger than 256 KB/);
    expect(check(report, 'contracts.execute').detail).toBe('balance (state): response larger than 256 KB');
  });

  it('fails contracts with an explanatory detail, not an exception, when the runtime is down', async () => {
    await runtime.behave('down');
    const report = await runner.run(input());
    expect(check(report, 'contracts.execute')).toMatchObject({
      passed: false,
      points: 0,
      detail: expect.stringContaining('runtime_unavailable'),
    });
    expect(check(report, 'contracts.realtime_stream').detail).toContain('runtime_unavailable');
    expect(report.dimensions.contracts.score).toBeLessThan(report.dimensions.contracts.max);
    expect(report.passed).toBe(false);
    expect(submissionFault(report)).toBe('conformance_failed');
    // Local validation of the same package still passes: submission can fail after local validation passed.
    expect((await runner.run(input({ full: false }))).passed).toBe(true);
  });

  it('fails the TLS check for a runtime whose certificate no trusted CA signed', async () => {
    const untrusted = await ProviderRuntime.start({ certificate: 'untrusted' });
    try {
      const report = await runner.run(input({ runtimeUrl: untrusted.url }));
      expect(check(report, 'security.tls')).toMatchObject({
        passed: false,
        detail: expect.stringContaining('is not trusted (DEPTH_ZERO_SELF_SIGNED_CERT'),
      });
      expect(report.dimensions.security.score).toBe(0);
      expect(report.passed).toBe(false);
      expect(untrusted.requests).toEqual([]);
    } finally {
      await untrusted.close();
    }
  });
});

type CheckReport = { id: string; passed: boolean; points: number; max: number; detail: string };
type RunBody = { id: string; status: string; dimensions: ConformanceReport['dimensions'] };
const checkOf = (run: RunBody, id: string): CheckReport => {
  const found = DIMENSIONS.flatMap((k) => run.dimensions[k].checks).find((c) => c.id === id);
  if (!found) throw new Error(`no check ${id} in ${JSON.stringify(run)}`);
  return found;
};

/**
 * The webhook-receiver check through the public path: the app's webhook
 * endpoint as the provider configures it (PUT /webhook, secret from the API),
 * a real HTTPS receiver on loopback that verifies X-Service-Signature with
 * that secret, and conformance started by validate?full=true and by submit.
 */
describe("conformance probes the app's webhook receiver (through the HTTP API)", () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let runtime: ProviderRuntime;
  let receiver: ProviderRuntime;
  let url: string;
  let developer: OnboardedDeveloper;
  let app: RegisteredApp;
  let auth: { authorization: string };
  let slugs = 0;

  /** The good package, with the runtime URL where the spec puts it: on each capability. */
  const capabilities = () => (goodPackageCapabilities() as Array<Record<string, unknown>>).map((c) => ({ ...c, runtimeUrl: runtime.url }));

  async function createPackage(appAuth: { authorization: string }, appId: string) {
    slugs += 1;
    const res = await request(url)
      .post('/v1/providers/packages')
      .set(appAuth)
      .send({
        appId,
        name: `Hooked ${slugs}`,
        slug: `hooked-${slugs}`,
        description: 'x',
        riskTier: 'action_capable',
        capabilities: capabilities(),
      })
      .expect(201);
    return { id: res.body.id as string, versionId: res.body.versions[0].id as string };
  }

  /** What the conformance suite sent the receiver (real deliveries, such as package.submitted, reach it too). */
  const probes = () => receiver.requestsTo('/webhooks').filter((r) => r.headers['user-agent'] === 'service-conformance/1');

  async function fullRun(appAuth: { authorization: string }, pkg: { id: string; versionId: string }): Promise<RunBody> {
    const queued = await request(url)
      .post(`/v1/providers/packages/${pkg.id}/versions/${pkg.versionId}/validate?full=true`)
      .set(appAuth)
      .expect(202);
    return waitFor(
      async () => {
        const res = await request(url).get(`/v1/providers/conformance/${queued.body.id}`).set(appAuth).expect(200);
        return res.body.status === 'completed' ? (res.body as RunBody) : undefined;
      },
      { what: 'the full conformance run', timeoutMs: 30_000, intervalMs: 100 },
    );
  }

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url });
    ({ url } = await env.startApi());
    await env.startWorker();
    developer = await onboardDeveloper(url, smtp, 'hooked@example.com');
    app = await registerApp(url, developer, { webhook_url: 'https://127.0.0.1:9/hooks' });
    // The signing secret as a provider learns it: from the API (a rotation always shows it).
    await request(url).put(`/v1/providers/apps/${app.id}/webhook`).set(developer.auth).send({});
    const rotated = await request(url).post(`/v1/providers/apps/${app.id}/webhook/secret`).set(developer.auth).expect(200);
    const secret = (rotated.body.webhook_secret ?? rotated.body.secret) as string;
    expect(secret).toEqual(expect.any(String));
    // The provider's receiver verifies X-Service-Signature with that secret and answers 401 otherwise.
    receiver = await ProviderRuntime.start({ webhookSecret: secret });
    await request(url)
      .put(`/v1/providers/apps/${app.id}/webhook`)
      .set(developer.auth)
      .send({ url: `${receiver.url}/webhooks` })
      .expect(200);
    auth = { authorization: `Bearer ${await appToken(url, app)}` };
  });
  afterEach(async () => {
    await receiver.behave('conforming');
    receiver.clearRequests();
  });
  afterAll(async () => {
    await env?.close();
    await receiver?.close();
    await runtime?.close();
    await smtp?.close();
  });

  it('probes the receiver of a queued full run with unsigned, unprefixed, wrongly and correctly signed deliveries, and scores it', async () => {
    const pkg = await createPackage(auth, app.id);
    const run = await fullRun(auth, pkg);
    expect(checkOf(run, 'error_handling.webhook_signature')).toMatchObject({
      passed: true,
      points: 4,
      detail: `the receiver at ${receiver.url}/webhooks verifies X-Service-Signature`,
    });
    const deliveries = probes();
    expect(deliveries).toHaveLength(4);
    // Test traffic, marked as such (docs/runtime-auth.md, "Test mode").
    for (const delivery of deliveries) expect(delivery.headers['x-service-livemode']).toBe('false');
    const digest = createHmac('sha256', receiver.webhookSecret).update(deliveries[0].rawBody).digest('hex');
    const signatures = deliveries.map((d) => d.headers['x-service-signature']);
    expect(signatures).toEqual(expect.arrayContaining([undefined, digest, `sha256=${digest}`]));
    expect(deliveries[0].body).toMatchObject({ id: expect.stringMatching(ID('evt')), type: 'capability.invoked' });
    // The secret never travels in the run's report.
    expect(JSON.stringify(run)).not.toContain(receiver.webhookSecret);
  });

  it('marks down a receiver that accepts unsigned deliveries, in the run that submission makes', async () => {
    const pkg = await createPackage(auth, app.id);
    await receiver.behave('no_auth_check');
    const submitted = await request(url)
      .post(`/v1/providers/packages/manage/${pkg.id}/versions/${pkg.versionId}/submit`)
      .set(auth)
      .expect(200);
    const check = checkOf(submitted.body.conformance, 'error_handling.webhook_signature');
    expect(check).toMatchObject({ passed: false, max: 4 });
    expect(check.detail).toContain('delivery without X-Service-Signature: answered 200');
    expect(probes()).toHaveLength(4);
  });

  it('does not apply the check to an app without a webhook endpoint', async () => {
    const plain = await registerApp(url, developer, { webhook_url: undefined });
    const plainAuth = { authorization: `Bearer ${await appToken(url, plain)}` };
    const run = await fullRun(plainAuth, await createPackage(plainAuth, plain.id));
    expect(checkOf(run, 'error_handling.webhook_signature')).toMatchObject({
      max: 0,
      detail: 'not applicable: the app has no webhook endpoint (no webhook_url with a signing secret)',
    });
    expect(probes()).toEqual([]);
  });
});
