import { createServer, Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { CallContext, CapabilityDescriptor, defineRuntime, RuntimeError } from '@soul-service/runtime-sdk';
import { APP_CONFIG } from '../../src/config/config.module';
import type { AppConfig } from '../../src/config/app-config';
import { RuntimeTokens } from '../../src/modules/access/runtime-tokens';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities } from '../support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, registerApp, RegisteredApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted, testCertificate } from '../support/test-ca';
import { login, LoggedInUser } from '../support/users';

/** The state and action capabilities of the test banking package: descriptions, schemas and examples that pass conformance. */
const capabilities = () =>
  (goodPackageCapabilities() as Array<{ type: string; name: string; schema: Record<string, unknown> }>).filter(
    (c) => c.name === 'balance' || c.name === 'transfer',
  );

/**
 * A runtime written with @soul-service/runtime-sdk, served over HTTPS with the
 * test CA, published through the real service (submission runs the full
 * conformance suite against it: token probes included) and called through the
 * service's bridge. The SDK verifies the service's real runtime tokens
 * against the service's real JWKS, fetched over HTTP; a token the service
 * mints for another app is refused.
 */
describe('runtime SDK against the service', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let https: Server;
  let runtimeUrl: string;
  let url: string;
  let config: AppConfig;
  let tokens: RuntimeTokens;
  let app: RegisteredApp;
  let other: RegisteredApp;
  let user: LoggedInUser;
  let packageId: string;
  let installId: string;
  /** Every call the runtime answered: the path, the status and, when a handler ran, its context. */
  const answered: Array<{ path: string; status: number }> = [];
  const contexts: CallContext[] = [];
  const transfers: Array<Record<string, unknown>> = [];

  const execute = (capability: string, body: Record<string, unknown>) =>
    request(url).post(`/v1/providers/packages/${packageId}/capabilities/${capability}/execute`).set(user.auth).send(body);

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
    const api = await env.startApi();
    url = api.url;
    config = api.app.get<AppConfig>(APP_CONFIG);
    tokens = api.app.get(RuntimeTokens);
    await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' } });
    const developer = await onboardDeveloper(url, smtp, 'sdk@example.com');
    app = await registerApp(url, developer, { webhook_url: undefined });
    other = await registerApp(url, developer, { name: 'Other App', webhook_url: undefined });
    const appAuth = { authorization: `Bearer ${await appToken(url, app)}` };

    const runtime = defineRuntime({
      descriptor: { capabilities: capabilities() as CapabilityDescriptor[] },
      // As a provider configures it: the service's issuer and its own app id; the JWKS from where this service listens.
      serviceUrl: config.publicBaseUrl,
      jwksUrl: `${url}/.well-known/jwks.json`,
      appId: app.id,
      handlers: {
        balance: async (params: Record<string, unknown>, context: CallContext) => {
          contexts.push(context);
          return { data: { available: params.account === 'savings' ? 9000 : 1520.75, currency: 'EUR' } };
        },
        transfer: async (input: Record<string, unknown>, context: CallContext) => {
          contexts.push(context);
          if (!context.livemode)
            return { result: { transferId: 'tr_fixture', state: 'completed' }, message: 'Test transfer: nothing sent.' };
          if (input.toAccount === 'DE00000000000000000000') throw new RuntimeError('PERMISSION_DENIED', 'the account is frozen');
          transfers.push(input);
          return { result: { transferId: `tr_${transfers.length}`, state: 'completed' }, message: 'Transfer sent.' };
        },
      },
    });
    const listener = runtime.listener();
    https = createServer(testCertificate('trusted'), (req, res) => {
      res.once('finish', () => answered.push({ path: req.url ?? '', status: res.statusCode }));
      listener(req, res);
    });
    await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
    runtimeUrl = `https://127.0.0.1:${(https.address() as AddressInfo).port}`;

    ({ packageId } = await publishPackage(url, appAuth, {
      appId: app.id,
      name: 'SDK Bank',
      slug: 'sdk-bank',
      description: 'Balances and transfers from a runtime built with the SDK',
      riskTier: 'action_capable',
      runtimeUrl,
      capabilities: capabilities().map((c) => ({ ...c, runtimeUrl })),
    }));
    user = await login(url, idp, { sub: 'uid-sdk', name: 'Sam', email: 'sam@example.com' });
    installId = (await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201)).body.id;
  }, 90_000);

  afterAll(async () => {
    await env?.close();
    await new Promise((resolve) => (https ? https.close(resolve) : resolve(undefined)));
    await idp?.close();
    await smtp?.close();
  });

  it('passed submission: conformance’s test traffic was verified, and its four bad-token probes were refused with 401', () => {
    const testTraffic = contexts.filter((c) => !c.livemode);
    expect(testTraffic.length).toBeGreaterThan(3);
    for (const context of testTraffic) expect(context.installId).toMatch(/^inst_test/);
    expect(answered.filter((a) => a.status === 401)).toHaveLength(4);
  });

  it('serves a state call through the bridge, verifying the service’s live token for this install and user', async () => {
    contexts.length = 0;
    const res = await execute('balance', { params: { account: 'savings' } }).expect(200);
    expect(res.body).toMatchObject({ data: { available: 9000, currency: 'EUR' } });
    expect(contexts).toHaveLength(1);
    expect(contexts[0]).toMatchObject({
      userId: user.id,
      installId,
      requestId: res.body.requestId,
      livemode: true,
      scopes: ['capabilities:execute'],
      capability: 'balance',
      mode: 'state',
    });
    expect(contexts[0].claims).toMatchObject({ iss: config.publicBaseUrl, aud: app.id, sub: user.id, iid: installId });
  });

  it('refuses params against the descriptor before the handler runs (the service checks them first too)', async () => {
    contexts.length = 0;
    const res = await execute('balance', { params: { account: 'brokerage' } }).expect(400);
    expect(res.body.field).toBe('params.account');
    expect(contexts).toHaveLength(0);
  });

  it('runs a confirmed action once with the service’s idempotency key, and passes a refusal on', async () => {
    contexts.length = 0;
    const input = { toAccount: 'DE89370400440532013000', amount: 25, currency: 'EUR' };
    const pending = await execute('transfer', { input, idempotencyKey: 'sdk-transfer-1' }).expect(202);
    const confirmed = await request(url).post(`/v1/actions/${pending.body.confirmationId}/confirm`).set(user.auth).expect(200);
    expect(confirmed.body).toMatchObject({
      status: 'completed',
      result: { transferId: 'tr_1', state: 'completed' },
      message: 'Transfer sent.',
    });
    expect(transfers).toEqual([input]);
    expect(contexts[0]).toMatchObject({
      userId: user.id,
      installId,
      livemode: true,
      mode: 'action',
      idempotencyKey: expect.any(String),
      confirmationId: pending.body.confirmationId,
    });

    const frozen = await execute('transfer', { input: { ...input, toAccount: 'DE00000000000000000000' } }).expect(202);
    const refused = await request(url).post(`/v1/actions/${frozen.body.confirmationId}/confirm`).set(user.auth);
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toBe('The runtime answered PERMISSION_DENIED: the account is frozen');
    expect(transfers).toHaveLength(1);
  });

  it('refuses a genuine service token minted for another app with 401 AUTH_INVALID, without running the handler', async () => {
    contexts.length = 0;
    const requestId = 'req_sdkOtherApp00000000000';
    const headers = await tokens.headers({ appId: other.id, userId: user.id, installId, requestId, scopes: [], livemode: true });
    const res = await fetch(`${runtimeUrl}/capabilities/balance/execute`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({
        capability: 'balance',
        mode: 'state',
        params: { account: 'checking' },
        context: { userId: user.id, installId },
      }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ status: 'error', error: { code: 'AUTH_INVALID', retryable: false } });
    // The same call with this app's token goes through: only the audience differed.
    const own = await tokens.headers({ appId: app.id, userId: user.id, installId, requestId, scopes: [], livemode: true });
    const ok = await fetch(`${runtimeUrl}/capabilities/balance/execute`, {
      method: 'POST',
      headers: { ...own, 'content-type': 'application/json' },
      body: JSON.stringify({
        capability: 'balance',
        mode: 'state',
        params: { account: 'checking' },
        context: { userId: user.id, installId },
      }),
    });
    expect(ok.status).toBe(200);
    expect(contexts).toHaveLength(1);
  });
});
