import { decodeJwt, decodeProtectedHeader } from 'jose';
import request from 'supertest';
import { APP_CONFIG } from '../../src/config/config.module';
import type { AppConfig } from '../../src/config/app-config';
import { DIMENSIONS, TestTraffic } from '@soul-service/rules';
import { RuntimeTokens } from '../../src/modules/access/runtime-tokens';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime, RecordedRequest, StrictVerification } from '../support/provider-runtime';
import { appToken, onboardDeveloper, OnboardedDeveloper, publishPackage, RegisteredApp, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';
import { WebhookReceiver } from '../support/webhook-receiver';
import { subscribeWebhook } from '../support/webhook-profiles';

type Check = { id: string; passed: boolean; points: number; max: number; detail: string; warning?: boolean };
type Run = { id: string; status: string; passed: boolean; score: number; dimensions: Record<string, { score: number; checks: Check[] }> };
const checkOf = (run: Run, id: string): Check => {
  const found = DIMENSIONS.flatMap((k) => run.dimensions[k].checks).find((c) => c.id === id);
  if (!found) throw new Error(`no check ${id} in ${JSON.stringify(run)}`);
  return found;
};
const bearerOf = (call: RecordedRequest) => String(call.headers.authorization).replace(/^Bearer /, '');

/**
 * Runtime tokens (docs/runtime-auth.md) against a runtime that verifies them
 * exactly as the document says: the service's JWKS fetched over HTTP, issuer,
 * audience (the app id), type, expiry, `rid` and `livemode` against the
 * request's headers. Live calls and conformance carry the same kind of token;
 * conformance is test traffic (`livemode: false`) and checks that a runtime
 * refuses missing, expired, forged and other-app tokens.
 */
describe('runtime tokens: calls a provider runtime can verify, and test mode', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let strict: ProviderRuntime;
  let lax: ProviderRuntime;
  let url: string;
  let config: AppConfig;
  let tokens: RuntimeTokens;
  let developer: OnboardedDeveloper;
  let app: RegisteredApp;
  let appAuth: { authorization: string };
  let user: LoggedInUser;
  let packageId: string;
  let installId: string;
  let slugs = 0;
  let verification: StrictVerification;

  const capabilities = (runtime: ProviderRuntime) =>
    (goodPackageCapabilities() as Array<Record<string, unknown>>).map((c) => ({ ...c, runtimeUrl: runtime.url }));
  const execute = (capability: string, body: Record<string, unknown>) =>
    request(url).post(`/v1/providers/packages/${packageId}/capabilities/${capability}/execute`).set(user.auth).send(body);
  const capabilityCalls = (runtime: ProviderRuntime) => runtime.requestsTo('/capabilities/');

  async function createPackage(runtime: ProviderRuntime): Promise<{ id: string; versionId: string }> {
    slugs += 1;
    const res = await request(url)
      .post('/v1/providers/packages')
      .set(appAuth)
      .send({
        appId: app.id,
        name: `Verified Bank ${slugs}`,
        slug: `verified-bank-${slugs}`,
        description: 'x',
        riskTier: 'action_capable',
        capabilities: capabilities(runtime),
      })
      .expect(201);
    return { id: res.body.id as string, versionId: res.body.versions[0].id as string };
  }

  async function fullRun(pkg: { id: string; versionId: string }): Promise<Run> {
    const queued = await request(url)
      .post(`/v1/providers/packages/${pkg.id}/versions/${pkg.versionId}/validate?full=true`)
      .set(appAuth)
      .expect(202);
    return waitFor(
      async () => {
        const res = await request(url).get(`/v1/providers/conformance/${queued.body.id}`).set(appAuth).expect(200);
        return res.body.status === 'completed' ? (res.body as Run) : undefined;
      },
      { what: 'the full conformance run', timeoutMs: 30_000, intervalMs: 100 },
    );
  }

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    strict = await ProviderRuntime.start();
    lax = await ProviderRuntime.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env, RUNTIME_RETRY_BASE_MS: '20', RUNTIME_RETRY_BUDGET_MS: '5000' });
    const api = await env.startApi();
    url = api.url;
    config = api.app.get<AppConfig>(APP_CONFIG);
    tokens = api.app.get(RuntimeTokens);
    // The queued full runs need a worker; its poller and stream supervisor stay quiet (hourly ticks).
    await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' } });
    developer = await onboardDeveloper(url, smtp, 'verified@example.com');
    // No webhook endpoint: the receiver check does not apply, so a full run of the strict runtime can score 100.
    app = await registerApp(url, developer, { webhook_url: undefined });
    appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    // Configured as a provider would: the service's key set, its issuer, and this app's id as the audience.
    verification = { jwksUrl: `${url}/.well-known/jwks.json`, issuer: config.publicBaseUrl, audience: app.id };
    strict.verifyStrictly(verification);
    await lax.behave('accepts_any_token');
    // Submission runs the full suite against the strict runtime: it must pass to be published.
    ({ packageId } = await publishPackage(url, appAuth, {
      appId: app.id,
      name: 'Verified Bank',
      slug: 'verified-bank',
      description: 'Balances and transfers',
      riskTier: 'action_capable',
      runtimeUrl: strict.url,
      capabilities: capabilities(strict),
    }));
    user = await login(url, idp, { sub: 'uid-verified', name: 'Vera', email: 'vera@example.com' });
    installId = (await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201)).body.id;
  }, 90_000);

  beforeEach(() => {
    strict.clearRequests();
    lax.clearRequests();
  });
  afterEach(() => {
    strict.script.length = 0;
    strict.verifyStrictly(verification);
  });

  afterAll(async () => {
    await env?.close();
    await strict?.close();
    await lax?.close();
    await idp?.close();
    await smtp?.close();
  });

  describe('conformance through the HTTP API', () => {
    it('passes a strict runtime: every valid call verified as test traffic, every bad token refused with 401', async () => {
      const run = await fullRun(await createPackage(strict));
      const failed = DIMENSIONS.flatMap((k) => run.dimensions[k].checks).filter((c) => !c.passed && !c.warning);
      expect(failed.map((c) => `${c.id}: ${c.detail}`)).toEqual([]);
      expect(run).toMatchObject({ status: 'completed', passed: true, score: 100 });
      expect(checkOf(run, 'security.token_verification')).toMatchObject({
        passed: true,
        points: 2,
        max: 2,
        detail:
          'calls without a token, with an expired token, a token signed by another key and a token for another app are refused with 401',
      });
      expect(run.dimensions.security.score).toBe(10);

      const calls = capabilityCalls(strict);
      const verified = calls.filter((c) => c.claims);
      const refused = calls.filter((c) => !c.claims);
      expect(verified.length).toBeGreaterThan(10);
      // Exactly the four probes were refused; everything else was verified.
      expect(refused).toHaveLength(4);
      const installs = new Set(verified.map((c) => c.claims!.iid));
      expect(installs.size).toBe(1);
      for (const call of verified) {
        expect(call.claims).toMatchObject({
          iss: config.publicBaseUrl,
          aud: app.id,
          iid: expect.stringMatching(/^inst_test[0-9A-Za-z]{18}$/),
          sub: expect.stringMatching(/^usr_test[0-9A-Za-z]{18}$/),
          rid: call.headers['x-service-request-id'],
          livemode: false,
          jti: expect.any(String),
        });
        expect(call.headers['x-service-livemode']).toBe('false');
      }
      const probes = refused.map((c) => (c.headers.authorization ? decodeJwt(bearerOf(c)) : null));
      expect(probes.filter((p) => p === null)).toHaveLength(1);
      expect(probes.filter((p) => p && p.aud !== app.id)).toHaveLength(1);
      expect(probes.filter((p) => p && (p.exp as number) * 1000 < Date.now())).toHaveLength(1);
      for (const call of refused) expect(call.headers['x-service-livemode']).toBe('false');
    });

    it('takes the token check away from a runtime that accepts any token, which cannot pass or be submitted', async () => {
      const pkg = await createPackage(lax);
      const run = await fullRun(pkg);
      const found = checkOf(run, 'security.token_verification');
      expect(found).toMatchObject({ passed: false, points: 0, max: 2 });
      for (const probe of ['an expired token', 'a token signed by another key', 'a token for another app']) {
        expect(found.detail).toContain(`(${probe}): answered 200`);
      }
      expect(run.dimensions.security.score).toBeLessThan(5);
      expect(run.passed).toBe(false);
      const submitted = await request(url)
        .post(`/v1/providers/packages/manage/${pkg.id}/versions/${pkg.versionId}/submit`)
        .set(appAuth)
        .expect(400);
      expect(submitted.body.type).toMatch(/#dimension_below_threshold$/);
    });

    it('tells a forged token from a genuine one only by its signature: same claims, same kid, another key', async () => {
      const traffic = new TestTraffic(tokens, app.id);
      const genuine = (await traffic.headers('req_forgeryProbe0000000000')).Authorization.replace(/^Bearer /, '');
      const forged = (await traffic.refusedHeaders('forged', 'req_forgeryProbe0000000000')).Authorization.replace(/^Bearer /, '');
      expect(decodeProtectedHeader(forged)).toEqual(decodeProtectedHeader(genuine));
      const { jti: _a, ...genuineClaims } = decodeJwt(genuine);
      const { jti: _b, ...forgedClaims } = decodeJwt(forged);
      expect(forgedClaims).toEqual(genuineClaims);
      expect(forged.split('.')[2]).not.toBe(genuine.split('.')[2]);
    });
  });

  describe('live calls through the bridge', () => {
    it('carry a token for the app, the install, the user and the request, in live mode (state and action)', async () => {
      const state = await execute('balance', { params: { account: 'checking' } }).expect(200);
      const [stateCall] = strict.requestsTo('/capabilities/balance/execute');
      expect(stateCall.headers['x-service-request-id']).toBe(state.body.requestId);
      expect(stateCall.headers['x-service-livemode']).toBe('true');
      expect(stateCall.claims).toMatchObject({
        iss: config.publicBaseUrl,
        aud: app.id,
        sub: user.id,
        uid: user.id,
        iid: installId,
        rid: state.body.requestId,
        livemode: true,
        scope: 'capabilities:execute',
      });
      const header = decodeProtectedHeader(bearerOf(stateCall));
      expect(header).toMatchObject({ alg: 'ES256', typ: 'runtime+jwt', kid: expect.any(String) });
      const claims = stateCall.claims!;
      expect((claims.exp as number) - (claims.iat as number)).toBe(300);

      const input = { toAccount: 'DE89370400440532013000', amount: 25, currency: 'EUR' };
      const pending = await execute('transfer', { input, idempotencyKey: 'verified-1' }).expect(202);
      const confirmed = await request(url).post(`/v1/actions/${pending.body.confirmationId}/confirm`).set(user.auth).expect(200);
      const [actionCall] = strict.requestsTo('/capabilities/transfer/execute');
      expect(actionCall.headers['x-service-livemode']).toBe('true');
      expect(actionCall.claims).toMatchObject({ aud: app.id, sub: user.id, iid: installId, livemode: true });
      expect(actionCall.claims!.rid).toBe(actionCall.headers['x-service-request-id']);
      expect(actionCall.claims!.jti).not.toBe(claims.jti);
      expect(confirmed.body).toMatchObject({ status: 'completed' });
    });

    it('are not a platform credential: the token a runtime received is refused by the service', async () => {
      await execute('transactions', { params: { account: 'checking' } }).expect(200);
      const [call] = strict.requestsTo('/capabilities/transactions/execute');
      const replayed = await request(url)
        .post(`/v1/providers/packages/${packageId}/capabilities/transactions/execute`)
        .set({ authorization: `Bearer ${bearerOf(call)}` })
        .send({ params: { account: 'checking' } })
        .expect(401);
      expect(JSON.stringify(replayed.body)).not.toContain('items');
      expect(strict.requestsTo('/capabilities/transactions/execute')).toHaveLength(1);
      // Nor is a platform token a runtime token: the strict runtime refuses the app's own access token.
      const platform = await fetch(`${strict.url}/capabilities/transactions/execute`, {
        method: 'POST',
        headers: {
          authorization: appAuth.authorization,
          'content-type': 'application/json',
          'x-service-request-id': 'req_platformTokenProbe0000',
          'x-service-livemode': 'true',
        },
        body: JSON.stringify({ capability: 'transactions', mode: 'history', params: { account: 'checking' } }),
      });
      expect(platform.status).toBe(401);
      expect(await platform.json()).toMatchObject({ status: 'error', error: { code: 'AUTH_INVALID', retryable: false } });
    });

    it('answers a runtime that refuses the token as invalid with 502 at once: no retry and no fresh token', async () => {
      // The provider configured the wrong audience: its runtime refuses every token of the service, as AUTH_INVALID.
      strict.verifyStrictly({ ...verification, audience: 'app_notThisApp0000000000000' });
      const res = await execute('transactions', { params: { account: 'checking' } }).expect(502);
      expect(res.body).toMatchObject({
        type: expect.stringMatching(/#runtime_unavailable$/),
        status: 502,
        runtime_error: { code: 'AUTH_INVALID', retryable: false },
      });
      expect(res.body.detail).toContain('refused the service');
      expect(res.body.reauthorization_required).toBeUndefined();
      expect(strict.requestsTo('/capabilities/transactions/execute')).toHaveLength(1);
      const installs = await request(url).get('/v1/installs').set(user.auth).expect(200);
      expect(installs.body.installs ?? installs.body.data ?? installs.body).toEqual(
        expect.arrayContaining([expect.objectContaining({ id: installId, reauthorization_required: false })]),
      );
    });

    it('retries AUTH_EXPIRED once with a fresh token for the same request (new jti, same rid)', async () => {
      strict.scriptNext({
        status: 401,
        body: { status: 'error', error: { code: 'AUTH_EXPIRED', message: 'clock skew', retryable: true } },
      });
      await execute('transactions', { params: { account: 'checking' } }).expect(200);
      const [first, second] = strict.requestsTo('/capabilities/transactions/execute');
      expect(second.claims).toBeDefined();
      const before = decodeJwt(bearerOf(first));
      expect(second.claims!.rid).toBe(before.rid);
      expect(second.headers['x-service-request-id']).toBe(first.headers['x-service-request-id']);
      expect(second.claims!.jti).not.toBe(before.jti);
    });
  });

  describe('webhook events', () => {
    let receiver: WebhookReceiver;
    let hooked: RegisteredApp;
    let hookedAuth: { authorization: string };

    beforeAll(async () => {
      receiver = await WebhookReceiver.start();
      hooked = await registerApp(url, developer, { name: 'Hooked App', webhook_url: receiver.url });
      hookedAuth = { authorization: `Bearer ${await appToken(url, hooked)}` };
      await subscribeWebhook(url, hooked, hookedAuth, { event_types: ['*'] });
    });
    afterAll(() => receiver?.close());

    it('marks a console test event as test traffic and a real event as live (X-Service-Livemode)', async () => {
      const sent = await request(url)
        .post(`/v1/providers/apps/${hooked.id}/webhook/test`)
        .set(hookedAuth)
        .send({ type: 'install.created' })
        .expect(202);
      const test = await waitFor(() => receiver.of(sent.body.event_id)[0], { what: 'the test event' });
      expect(test.headers['x-service-livemode']).toBe('false');
      // A real event: the app's package is submitted (its full run is test traffic to the runtime; the event is live).
      strict.verifyStrictly({ ...verification, audience: hooked.id });
      const pkg = await request(url)
        .post('/v1/providers/packages')
        .set(hookedAuth)
        .send({
          appId: hooked.id,
          name: 'Hooked Bank',
          slug: 'hooked-bank',
          description: 'x',
          riskTier: 'action_capable',
          capabilities: capabilities(strict),
        })
        .expect(201);
      await request(url)
        .post(`/v1/providers/packages/manage/${pkg.body.id}/versions/${pkg.body.versions[0].id}/submit`)
        .set(hookedAuth)
        .expect(200);
      const live = await waitFor(() => receiver.received.find((r) => r.body.type === 'package.submitted'), { what: 'package.submitted' });
      expect(live.headers['x-service-livemode']).toBe('true');
    });
  });
});
