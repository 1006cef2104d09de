import { createHash } from 'node:crypto';
import { getDataSourceToken } from '@nestjs/typeorm';
import { decodeJwt } from 'jose';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { PlatformTokens } from '../../src/modules/providers/auth/platform-tokens';
import { factories } from '../support/factories';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, OnboardedDeveloper, publishPackage, registerApp, RegisteredApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { login, LoggedInUser } from '../support/users';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const APP_SCOPES_WITHOUT_INSTALLS_READ = ['packages:read', 'packages:write', 'capabilities:execute', 'apps:read', 'webhooks:read'];

/**
 * Attacks on what a provider platform token may still do after what stood
 * behind it changed: an install token used for another user or after the
 * uninstall, an app token after its app gave up a scope or its secret was
 * rotated, installs granting scopes the app lacks, malformed client
 * credentials, and credentials left in caches. Two api instances share the
 * database and Redis, so every revocation is shown to hold on both.
 */
describe('platform tokens act only within what stands behind them now', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let urlA: string;
  let apiA: NestFastifyApplication;
  let urlB: string;
  let dataSource: DataSource;
  let developer: OnboardedDeveloper;
  let app: RegisteredApp;
  let appAuth: { authorization: string };
  let packageId: string;
  let alice: LoggedInUser;
  let bob: LoggedInUser;
  let bobInstallId: string;

  const capabilities = (goodPackageCapabilities() as Array<{ type: string }>).filter((c) => c.type !== 'action');
  const execute = (url: string, auth: { authorization: string }, body: Record<string, unknown> = {}) =>
    request(url)
      .post(`/v1/providers/packages/${packageId}/capabilities/balance/execute`)
      .set(auth)
      .send({ params: { account: 'checking' }, ...body });

  /**
   * An install token of `user`: a delegated app token (`uid`, `iid`) as the
   * authorization-code and refresh grants give one, minted here with the
   * service's own `PlatformTokens`. (Runtimes no longer receive these: runtime
   * calls carry runtime tokens, which the platform refuses; see runtime-auth.e2e-spec.ts.)
   */
  const installTokens = new Map<string, string>();
  async function installTokenOf(user: LoggedInUser): Promise<string> {
    const known = installTokens.get(user.id);
    if (known) return known;
    const installs = await request(urlA).get('/v1/installs').set(user.auth).expect(200);
    const list = (installs.body.installs ?? installs.body.data ?? installs.body) as Array<{
      id: string;
      package_id: string;
      scopes: string[];
    }>;
    const install = list.find((i) => i.package_id === packageId);
    if (!install) throw new Error(`${user.id} has no install of ${packageId}`);
    const token = await apiA
      .get(PlatformTokens)
      .forApp({ id: app.id, developerId: developer.id }, install.scopes, new Date(Date.now() + 3600_000), {
        delegation: { userId: user.id, installId: install.id },
      });
    installTokens.set(user.id, token);
    return token;
  }

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start({ capabilities });
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
    const a = await env.startApi();
    apiA = a.app;
    urlA = a.url;
    urlB = (await env.startApi()).url;
    await env.startWorker();
    dataSource = a.app.get(getDataSourceToken());
    developer = await onboardDeveloper(urlA, smtp, 'binding@example.com');
    app = await registerApp(urlA, developer);
    appAuth = bearer(await appToken(urlA, app));
    ({ packageId } = await publishPackage(urlA, appAuth, {
      appId: app.id,
      name: 'Bound Bank',
      slug: 'bound-bank',
      description: 'Balances',
      riskTier: 'data_only',
      runtimeUrl: runtime.url,
      capabilities,
    }));
    alice = await login(urlA, idp, { sub: 'uid-alice', name: 'Alice', email: 'alice@example.com' });
    bob = await login(urlA, idp, { sub: 'uid-bob', name: 'Bob', email: 'bob@example.com' });
    await request(urlA).post('/v1/installs').set(alice.auth).send({ package_id: packageId }).expect(201);
    bobInstallId = (await request(urlA).post('/v1/installs').set(bob.auth).send({ package_id: packageId }).expect(201)).body.id;
  }, 60_000);

  afterAll(async () => {
    await env.close();
    await runtime.close();
    await idp.close();
    await smtp.close();
  });

  describe("a token a user's install delegated", () => {
    it("executes for its own install only: another user's installId or userId is refused with insufficient_scope", async () => {
      const aliceToken = await installTokenOf(alice);
      runtime.requests.length = 0;
      const refused: string[] = [];
      for (const body of [{ installId: bobInstallId }, { userId: bob.id }]) {
        for (const url of [urlA, urlB]) {
          const res = await execute(url, bearer(aliceToken), body).expect(403);
          expect(res.body).toMatchObject({ title: expect.any(String), status: 403, type: expect.stringMatching(/#insufficient_scope$/) });
          refused.push(res.headers['x-service-request-id']);
        }
      }
      // None of the refused calls reached the runtime (the worker's state polls of the installs may, at any time).
      expect(refused.every((id) => /^req_/.test(id))).toBe(true);
      const reached = runtime.requests.filter((r) => r.path.includes('/capabilities/')).map((r) => r.headers['x-service-request-id']);
      expect(reached.filter((id) => refused.includes(id as string))).toEqual([]);
      // Naming nothing, or its own install, it acts for Alice.
      await execute(urlB, bearer(aliceToken)).expect(200);
      await execute(urlA, bearer(aliceToken), { userId: alice.id }).expect(200);
    });

    it("cannot manage the app's packages, apps or webhooks", async () => {
      const aliceToken = await installTokenOf(alice);
      for (const [method, path] of [
        ['get', '/v1/providers/packages'],
        ['get', `/v1/providers/apps/${app.id}`],
        ['get', `/v1/providers/apps/${app.id}/webhook`],
      ] as const) {
        const res = await request(urlA)[method](path).set(bearer(aliceToken)).expect(403);
        expect(res.body.type).toMatch(/#insufficient_scope$/);
      }
    });

    it('ends at once, on every instance, when the user uninstalls', async () => {
      const carol = await login(urlA, idp, { sub: 'uid-carol', name: 'Carol', email: 'carol@example.com' });
      const installId = (await request(urlA).post('/v1/installs').set(carol.auth).send({ package_id: packageId }).expect(201)).body.id;
      const token = await installTokenOf(carol);
      // Both instances have verified (and remembered) the token before the uninstall.
      await execute(urlA, bearer(token)).expect(200);
      await execute(urlB, bearer(token)).expect(200);
      await request(urlA).delete(`/v1/installs/${installId}`).set(carol.auth).expect(200);
      runtime.requests.length = 0;
      for (const url of [urlA, urlB]) {
        const res = await execute(url, bearer(token)).expect(401);
        expect(res.body.type).toMatch(/#invalid_token$/);
      }
      expect(runtime.requests).toHaveLength(0);
    });
  });

  describe('an app token', () => {
    it('loses a scope the app gives up: creating packages and rotating the webhook secret are refused afterwards', async () => {
      const other = await registerApp(urlA, developer, { name: 'Shrinking App' });
      const token = bearer(await appToken(urlA, other));
      await request(urlB).get('/v1/providers/packages').set(token).expect(200);
      await request(urlA)
        .patch(`/v1/providers/apps/${other.id}`)
        .set(developer.auth)
        .send({ scopes: ['packages:read', 'apps:read'] })
        .expect(200);
      for (const url of [urlA, urlB]) {
        const created = await request(url)
          .post('/v1/providers/packages')
          .set(token)
          .send({
            appId: other.id,
            name: 'Late',
            slug: 'late-pkg',
            description: 'x',
            riskTier: 'data_only',
            runtimeUrl: runtime.url,
            capabilities,
          })
          .expect(403);
        expect(created.body).toMatchObject({ required_scope: 'packages:write', detail: expect.stringMatching(/no longer holds/) });
        const rotated = await request(url).post(`/v1/providers/apps/${other.id}/webhook/secret`).set(token).expect(403);
        expect(rotated.body.required_scope).toBe('webhooks:write');
      }
      // What it still holds keeps working.
      await request(urlA).get('/v1/providers/packages').set(token).expect(200);
    });

    it('ends when its client secret is rotated without a grace period; tokens of the new secret work', async () => {
      const leaky = await registerApp(urlA, developer, { name: 'Leaky App' });
      const old = bearer(await appToken(urlA, leaky));
      await request(urlB).get(`/v1/providers/apps/${leaky.id}`).set(old).expect(200);
      const rotated = await request(urlA)
        .post(`/v1/providers/apps/${leaky.id}/secret`)
        .set(developer.auth)
        .send({ grace_period_seconds: 0 })
        .expect(200);
      for (const url of [urlA, urlB]) {
        const res = await request(url).get(`/v1/providers/apps/${leaky.id}`).set(old).expect(401);
        expect(res.body.type).toMatch(/#invalid_token$/);
      }
      const fresh = bearer(await appToken(urlA, { ...leaky, client_secret: rotated.body.client_secret }));
      await request(urlB).get(`/v1/providers/apps/${leaky.id}`).set(fresh).expect(200);
    });

    it('with a grace period, tokens of the old secret work until the grace ends, and then stop', async () => {
      const rolling = await registerApp(urlA, developer, { name: 'Rolling App' });
      const before = bearer(await appToken(urlA, rolling));
      const rotated = await request(urlA)
        .post(`/v1/providers/apps/${rolling.id}/secret`)
        .set(developer.auth)
        .send({ grace_period_seconds: 3600 })
        .expect(200);
      // During the grace, the old secret still obtains tokens and its tokens still work.
      const during = bearer(await appToken(urlA, rolling));
      const fresh = bearer(await appToken(urlA, { ...rolling, client_secret: rotated.body.client_secret }));
      for (const token of [before, during, fresh]) await request(urlB).get(`/v1/providers/apps/${rolling.id}`).set(token).expect(200);
      // The grace ends (moved into the past rather than waited for).
      await factories(dataSource).endPreviousSecretGrace(rolling.id);
      for (const token of [before, during]) await request(urlB).get(`/v1/providers/apps/${rolling.id}`).set(token).expect(401);
      await request(urlB).get(`/v1/providers/apps/${rolling.id}`).set(fresh).expect(200);
    });

    it('refreshed delegated tokens never carry a scope the app has given up since the grant', async () => {
      const gina = await login(urlA, idp, { sub: 'uid-gina', name: 'Gina', email: 'gina@example.com' });
      const verifier = 'v'.repeat(43);
      const consent = await request(urlA)
        .post('/v1/oauth/authorize')
        .set(gina.auth)
        .send({
          response_type: 'code',
          client_id: app.client_id,
          redirect_uri: 'https://acme.example/callback',
          package_id: packageId,
          scope: 'capabilities:execute installs:read',
          code_challenge: createHash('sha256').update(verifier).digest('base64url'),
          code_challenge_method: 'S256',
        })
        .expect(200);
      const code = new URL(consent.body.redirect_to).searchParams.get('code');
      const granted = await request(urlA)
        .post('/v1/auth/token')
        .auth(app.client_id, app.client_secret)
        .type('form')
        .send({ grant_type: 'authorization_code', code, redirect_uri: 'https://acme.example/callback', code_verifier: verifier })
        .expect(200);
      expect(granted.body.scope).toBe('capabilities:execute installs:read');
      await request(urlA)
        .patch(`/v1/providers/apps/${app.id}`)
        .set(developer.auth)
        .send({ scopes: APP_SCOPES_WITHOUT_INSTALLS_READ })
        .expect(200);
      const refreshed = await request(urlB)
        .post('/v1/auth/token')
        .auth(app.client_id, app.client_secret)
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: granted.body.refresh_token })
        .expect(200);
      expect(refreshed.body.scope).toBe('capabilities:execute');
      expect(decodeJwt(refreshed.body.access_token).scope).toBe('capabilities:execute');
    });
  });

  describe('POST /v1/installs', () => {
    it('refuses scopes the app of the package does not hold', async () => {
      const dave = await login(urlA, idp, { sub: 'uid-dave', name: 'Dave', email: 'dave@example.com' });
      await request(urlA)
        .patch(`/v1/providers/apps/${app.id}`)
        .set(developer.auth)
        .send({ scopes: APP_SCOPES_WITHOUT_INSTALLS_READ })
        .expect(200);
      const res = await request(urlA)
        .post('/v1/installs')
        .set(dave.auth)
        .send({ package_id: packageId, scopes: ['capabilities:execute', 'installs:read'] })
        .expect(400);
      expect(res.body.error).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/installs:read/) });
      expect(await dataSource.query(`SELECT 1 FROM installs WHERE user_id = $1`, [dave.id])).toHaveLength(0);
      await request(urlA)
        .post('/v1/installs')
        .set(dave.auth)
        .send({ package_id: packageId, scopes: ['capabilities:execute'] })
        .expect(201);
    });
  });

  describe('POST /v1/auth/token', () => {
    const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');

    it('answers 401 invalid_client to malformed Basic credentials and hostile client ids, never a 5xx', async () => {
      const headers = [
        `Basic ${b64('a%zz:b%zz')}`,
        `Basic ${b64('%:%')}`,
        `Basic ${b64('%E0%A4%A:x')}`,
        `Basic ${b64('no-colon')}`,
        `Basic ${b64(':')}`,
        `Basic ${b64('\u0000:\u0000')}`,
        `Basic ${b64(`${'%'.repeat(5000)}:x`)}`,
        'Basic',
        'Basic ',
        'Basic !!!!',
        'basic ====',
      ];
      // And a deterministic sweep of random bytes as the credentials.
      let seed = 7;
      const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
      for (let i = 0; i < 60; i += 1) {
        const bytes = Buffer.from(Array.from({ length: 1 + (next() % 40) }, () => next() % 256));
        headers.push(`Basic ${b64(bytes)}`);
      }
      for (const authorization of headers) {
        const res = await request(urlA)
          .post('/v1/auth/token')
          .set('authorization', authorization)
          .type('form')
          .send({ grant_type: 'client_credentials' });
        expect({ authorization, status: res.status }).toEqual({ authorization, status: 401 });
        expect(res.body.error).toBe('invalid_client');
      }
      for (const clientId of ['x'.repeat(100_000), "' OR 1=1 --", 'cid_0000']) {
        const res = await request(urlA)
          .post('/v1/auth/token')
          .send({ grant_type: 'client_credentials', client_id: clientId, client_secret: 'x' });
        expect(res.status).toBe(401);
        expect(res.body.error).toBe('invalid_client');
      }
      // Text no field may hold (NUL, a lone surrogate) is refused at the edge, for every route alike, naming the field.
      for (const clientId of ['cid_\u0000', '\ud800']) {
        const res = await request(urlA)
          .post('/v1/auth/token')
          .send({ grant_type: 'client_credentials', client_id: clientId, client_secret: 'x' });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ type: expect.stringMatching(/#invalid_format$/), field: 'client_id' });
      }
    });
  });

  describe('responses that carry a credential', () => {
    it('are sent with Cache-Control: no-store', async () => {
      const noStore = (res: request.Response) => {
        const path = (res as request.Response & { req: { path: string } }).req.path;
        expect({ path, cache: res.headers['cache-control'] }).toEqual({ path, cache: 'no-store' });
      };
      noStore(
        await request(urlA)
          .post('/v1/auth/login')
          .send({ firebase_token: await idp.token({ sub: 'uid-cache' }) })
          .expect(200),
      );
      noStore(
        await request(urlA)
          .post('/v1/providers/auth/login')
          .send({ email: developer.email, password: 'correct horse battery staple' })
          .expect(200),
      );
      const created = await request(urlA).post('/v1/providers/apps').set(developer.auth).send({ name: 'Cache App' }).expect(201);
      noStore(created);
      noStore(await request(urlA).post(`/v1/providers/apps/${created.body.id}/secret`).set(developer.auth).send({}).expect(200));
      noStore(
        await request(urlA)
          .put(`/v1/providers/apps/${created.body.id}/webhook`)
          .set(developer.auth)
          .send({ url: 'https://acme.example/hooks', event_types: ['*'] })
          .expect(201),
      );
      noStore(await request(urlA).post(`/v1/providers/apps/${created.body.id}/webhook/secret`).set(developer.auth).expect(200));
      noStore(await request(urlA).post('/v1/providers/account/mfa').set(developer.auth).expect(200));
      const erin = await login(urlA, idp, { sub: 'uid-erin', name: 'Erin', email: 'erin@example.com' });
      noStore(await request(urlA).post('/v1/installs').set(erin.auth).send({ package_id: packageId }).expect(201));
      noStore(
        await request(urlA)
          .post('/v1/auth/token')
          .auth(app.client_id, app.client_secret)
          .type('form')
          .send({ grant_type: 'client_credentials' }),
      );
      const frank = await login(urlA, idp, { sub: 'uid-frank', name: 'Frank', email: 'frank@example.com' });
      const consent = await request(urlA)
        .post('/v1/oauth/authorize')
        .set(frank.auth)
        .send({
          response_type: 'code',
          client_id: app.client_id,
          redirect_uri: 'https://acme.example/callback',
          package_id: packageId,
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        })
        .expect(200);
      noStore(consent);
      // Errors too: a refusal may echo what was sent.
      noStore(await request(urlA).get('/v1/me').expect(401));
    });
  });
});
