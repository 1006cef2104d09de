import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { GatewayClient } from '../support/gateway-client';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, publishVersion, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { login, LoggedInUser, raiseToEnterprise } from '../support/users';

type Capability = Record<string, unknown> & { name: string; type: string; description: string };

const capabilities = (...names: string[]) => (goodPackageCapabilities() as Capability[]).filter((c) => names.includes(c.name));
const authExpired = { status: 401, body: { status: 'error', error: { code: 'AUTH_EXPIRED', message: 'token expired', retryable: true } } };

/**
 * Issue 18, "Capabilities and the bridge": installs follow published versions
 * (a new capability mode waits for the user's consent), actions an app starts
 * reach the user (list, gateway event) and are decided once, and a runtime
 * that refuses a fresh token marks the install until the user re-authorizes.
 * Everything through the HTTP API and the gateway, against a real HTTPS runtime.
 */
describe('installs: upgrades, app-started confirmations and re-authorization', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let dataSource: DataSource;
  let appAuth: { authorization: string };
  let otherAppAuth: { authorization: string };
  let alice: LoggedInUser;
  let bob: LoggedInUser;
  let packageId: string;
  const sockets: GatewayClient[] = [];

  const installsOf = async (user: LoggedInUser) => (await request(url).get('/v1/installs').set(user.auth).expect(200)).body.installs;
  const installOf = async (user: LoggedInUser) =>
    (await installsOf(user)).find((i: { package_id: string }) => i.package_id === packageId) as Record<string, unknown>;
  /** Read at once when the frame arrives: the frame goes out only after the change has committed. */
  const installSettles = async (user: LoggedInUser, expected: Record<string, unknown>) => {
    const install = await installOf(user);
    expect(install).toMatchObject(expected);
    return install;
  };
  const execute = (capability: string, body: Record<string, unknown>, auth: { authorization: string }) =>
    request(url).post(`/v1/providers/packages/${packageId}/capabilities/${capability}/execute`).set(auth).send(body);
  const newVersion = async (version: string, caps: Capability[]) => {
    const res = await request(url)
      .post(`/v1/providers/packages/${packageId}/versions`)
      .set(appAuth)
      .send({ version, capabilities: caps, runtimeUrl: runtime.url })
      .expect(201);
    await publishVersion(url, appAuth, packageId, res.body.id);
    return res.body.id as string;
  };
  const gateway = async (user: LoggedInUser) => {
    const socket = await GatewayClient.open(url, user.token);
    sockets.push(socket);
    return socket;
  };

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env, RUNTIME_RETRY_BASE_MS: '20' });
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    // The worker dispatches the outbox; its poller and stream supervisor tick hourly so they never take a scripted answer.
    await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' } });
    const developer = await onboardDeveloper(url, smtp, 'installs@example.com');
    const app = await registerApp(url, developer);
    appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    const otherApp = await registerApp(url, developer, { name: 'Other App' });
    otherAppAuth = { authorization: `Bearer ${await appToken(url, otherApp)}` };
    alice = await login(url, idp, { sub: 'uid-alice-installs', name: 'Alice', email: 'alice-installs@example.com' });
    bob = await login(url, idp, { sub: 'uid-bob-installs', name: 'Bob', email: 'bob-installs@example.com' });
    await raiseToEnterprise(url, alice);
    await raiseToEnterprise(url, bob);
    ({ packageId } = await publishPackage(url, appAuth, {
      appId: app.id,
      name: 'Acme Bank',
      slug: 'acme-bank-installs',
      description: 'Balances and transactions',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      version: '1.0.0',
      capabilities: capabilities('balance', 'transactions'),
    }));
    await request(url).post('/v1/installs').set(alice.auth).send({ package_id: packageId }).expect(201);
    await request(url).post('/v1/installs').set(bob.auth).send({ package_id: packageId }).expect(201);
  }, 90_000);

  afterEach(async () => {
    runtime.script.length = 0;
    await GatewayClient.terminateAll(sockets);
  });

  afterAll(async () => {
    await env.close();
    await runtime.close();
    await idp.close();
    await smtp.close();
  });

  describe('the upgrade rule', () => {
    it('moves existing installs to a published version that adds no capability mode, and tells the user', async () => {
      const socket = await gateway(alice);
      const before = await installOf(alice);
      expect(before).toMatchObject({ version: '1.0.0', upgrade: null, reauthorization_required: false, package_name: 'Acme Bank' });
      const caps = capabilities('balance', 'transactions').map((c) => ({ ...c, description: `${c.description} (improved)` }));
      await newVersion('1.1.0', caps);
      const frame = await socket.next('install.updated', (f) => f.data.reason === 'upgraded', 15_000);
      expect(frame.data.install).toMatchObject({ id: before.id, version: '1.1.0', upgrade: null });
      await installSettles(alice, { id: before.id, version: '1.1.0', upgrade: null });
      await installSettles(bob, { version: '1.1.0', upgrade: null });
    });

    it('keeps installs on their version when the published one adds a mode, shows the upgrade, and a repeat install grants it', async () => {
      const socket = await gateway(alice);
      const versionId = await newVersion('2.0.0', capabilities('balance', 'transactions', 'transfer'));
      const frame = await socket.next('install.updated', (f) => f.data.reason === 'upgrade_available', 15_000);
      const upgrade = { version_id: versionId, version: '2.0.0', new_capability_modes: ['action'] };
      expect(frame.data.install).toMatchObject({ version: '1.1.0', upgrade });
      await installSettles(alice, { version: '1.1.0', upgrade });

      // Until the user consents, the new action is not part of the install.
      await execute('transfer', { input: { toAccount: 'DE89370400440532013000', amount: 1, currency: 'EUR' } }, alice.auth).expect(404);

      const again = await request(url).post('/v1/installs').set(alice.auth).send({ package_id: packageId }).expect(200);
      expect(again.body).toMatchObject({
        id: (frame.data.install as { id: string }).id,
        version: '2.0.0',
        upgrade: null,
        scopes: ['capabilities:execute'],
      });
      const own = await execute(
        'transfer',
        { input: { toAccount: 'DE89370400440532013000', amount: 1, currency: 'EUR' } },
        alice.auth,
      ).expect(202);
      expect(own.body.startedBy).toBe('user');

      // Bob has not consented: still on the old version, still asked.
      await installSettles(bob, { version: '1.1.0', upgrade });
      // The consent answers the request itself: no further notice.
      await socket.none('install.updated', () => true, 300);
    });

    it('answers a repeat install that changes nothing with the same install (200), and refuses scopes the app lacks', async () => {
      const first = await request(url).post('/v1/installs').set(alice.auth).send({ package_id: packageId }).expect(200);
      const second = await request(url).post('/v1/installs').set(alice.auth).send({ package_id: packageId }).expect(200);
      expect(second.body).toEqual(first.body);
      const bad = await request(url)
        .post('/v1/installs')
        .set(alice.auth)
        .send({ package_id: packageId, scopes: ['packages:write'] })
        .expect(400);
      expect(bad.body.error).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    });
  });

  describe('actions started by an app', () => {
    const input = { toAccount: 'DE89370400440532013000', amount: 42, currency: 'EUR' };
    let started = 0;
    // Each action is a new one (an app retrying without a key would get the earlier confirmation back).
    const startByApp = async () => {
      started += 1;
      const res = await execute('transfer', { userId: alice.id, input, idempotencyKey: `app-order-${started}` }, appAuth).expect(202);
      expect(res.body).toMatchObject({ status: 'pending_confirmation', packageName: 'Acme Bank', startedBy: 'app' });
      return res.body.confirmationId as string;
    };

    it('reaches the user: an action.pending gateway event and GET /v1/actions/pending; nobody else sees it', async () => {
      const socket = await gateway(alice);
      const bobSocket = await gateway(bob);
      const confirmationId = await startByApp();
      const frame = await socket.next('action.pending', (f) => f.data.confirmationId === confirmationId, 15_000);
      expect(frame.data).toMatchObject({ capability: 'transfer', input, packageName: 'Acme Bank', status: 'pending_confirmation' });
      const listed = await request(url).get('/v1/actions/pending').set(alice.auth).expect(200);
      expect(listed.body.confirmations.map((c: { confirmationId: string }) => c.confirmationId)).toContain(confirmationId);
      expect(listed.body.confirmations.every((c: { status: string }) => c.status === 'pending_confirmation')).toBe(true);

      const bobs = await request(url).get('/v1/actions/pending').set(bob.auth).expect(200);
      expect(bobs.body.confirmations.map((c: { confirmationId: string }) => c.confirmationId)).not.toContain(confirmationId);
      await bobSocket.none('action.pending');
      const stranger = await request(url).post(`/v1/actions/${confirmationId}/confirm`).set(bob.auth).expect(404);
      expect(stranger.body.error).toMatchObject({ code: 'NOT_FOUND', status: 404 });
      await request(url).post(`/v1/actions/${confirmationId}/cancel`).set(alice.auth).expect(200);
      // Every session of the user hears of the decision, so a list shown elsewhere drops it.
      const decided = await socket.next('action.decided', (f) => f.data.confirmationId === confirmationId, 15_000);
      expect(decided.data).toEqual({ confirmationId, status: 'cancelled' });
      const after = await request(url).get('/v1/actions/pending').set(alice.auth).expect(200);
      expect(after.body.confirmations.map((c: { confirmationId: string }) => c.confirmationId)).not.toContain(confirmationId);
    });

    it('refuses the list to app tokens and missing tokens with the user API envelope', async () => {
      const asApp = await request(url).get('/v1/actions/pending').set(appAuth).expect(401);
      expect(asApp.body.error).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
      const anonymous = await request(url).get('/v1/actions/pending').expect(401);
      expect(anonymous.body.error).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
      // Another app cannot start an action on this package for the user.
      await execute('transfer', { userId: alice.id, input }, otherAppAuth).expect(403);
      const hostile = await request(url)
        .post(`/v1/actions/${encodeURIComponent("conf_' OR 1=1 --")}/confirm`)
        .set(alice.auth)
        .expect(404);
      expect(hostile.body.error.code).toBe('NOT_FOUND');
    });

    it('lets exactly one of 30 concurrent confirmations run the action', async () => {
      const confirmationId = await startByApp();
      runtime.clearRequests();
      const answers = await Promise.all(
        Array.from({ length: 30 }, () => request(url).post(`/v1/actions/${confirmationId}/confirm`).set(alice.auth)),
      );
      expect(answers.every((a) => a.status === 200 || a.status === 409)).toBe(true);
      expect(answers.some((a) => a.status === 200 && a.body.status === 'completed')).toBe(true);
      expect(runtime.requestsTo('/capabilities/transfer/execute')).toHaveLength(1);
    });

    it('lets exactly one decision win when 30 confirms and cancels race', async () => {
      const confirmationId = await startByApp();
      runtime.clearRequests();
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          request(url)
            .post(`/v1/actions/${confirmationId}/${i % 2 === 0 ? 'confirm' : 'cancel'}`)
            .set(alice.auth),
        ),
      );
      const winners = new Set(answers.filter((a) => a.status === 200).map((a) => a.body.status));
      expect(winners.size).toBe(1);
      const [outcome] = [...winners];
      expect(['completed', 'cancelled']).toContain(outcome);
      expect(runtime.requestsTo('/capabilities/transfer/execute')).toHaveLength(outcome === 'completed' ? 1 : 0);
      expect(answers.filter((a) => a.status !== 200).every((a) => a.status === 409)).toBe(true);
    });
  });

  describe('re-authorization', () => {
    it('marks the install after a second AUTH_EXPIRED, tells the user, and a repeat install clears it with one new token family', async () => {
      const socket = await gateway(alice);
      const install = await installOf(alice);
      runtime.scriptNext(authExpired, authExpired);
      const failed = await execute('balance', { params: { account: 'checking' } }, alice.auth);
      expect(failed.status).toBeGreaterThanOrEqual(400);
      expect(JSON.stringify(failed.body)).toContain('reauthorization_required');

      const frame = await socket.next('install.updated', (f) => f.data.reason === 'reauthorization_required', 15_000);
      expect(frame.data.install).toMatchObject({ id: install.id, reauthorization_required: true });
      await installSettles(alice, { id: install.id, reauthorization_required: true });
      // Bob's install of the same package is untouched.
      expect(await installOf(bob)).toMatchObject({ reauthorization_required: false });

      // A second refusal while marked tells nobody again.
      runtime.scriptNext(authExpired, authExpired);
      await execute('balance', { params: { account: 'checking' } }, alice.auth);
      await socket.none('install.updated', () => true, 500);

      const tokensBefore: Array<{ id: string }> = await dataSource.query(
        `SELECT id FROM oauth_refresh_tokens WHERE install_id = $1 AND revoked_at IS NULL`,
        [install.id],
      );
      // 30 re-authorizations at once: all answer the same install, one new token family is issued.
      const agains = await Promise.all(
        Array.from({ length: 30 }, () => request(url).post('/v1/installs').set(alice.auth).send({ package_id: packageId })),
      );
      expect(agains.map((a) => a.status)).toEqual(Array(30).fill(200));
      for (const again of agains) expect(again.body).toMatchObject({ id: install.id, reauthorization_required: false });
      const tokensAfter: Array<{ id: string }> = await dataSource.query(
        `SELECT id FROM oauth_refresh_tokens WHERE install_id = $1 AND revoked_at IS NULL`,
        [install.id],
      );
      expect(tokensAfter).toHaveLength(1);
      expect(tokensBefore.map((t) => t.id)).not.toContain(tokensAfter[0].id);
      await execute('balance', { params: { account: 'checking' } }, alice.auth).expect(200);
      expect(await installOf(alice)).toMatchObject({ reauthorization_required: false });
    });

    it('does not mark the install when the first AUTH_EXPIRED is cured by a fresh token', async () => {
      runtime.scriptNext(authExpired);
      await execute('balance', { params: { account: 'checking' } }, bob.auth).expect(200);
      await new Promise((r) => setTimeout(r, 500));
      expect(await installOf(bob)).toMatchObject({ reauthorization_required: false });
    });
  });
});
