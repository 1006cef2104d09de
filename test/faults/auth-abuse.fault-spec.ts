import { createHmac, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { getDataSourceToken } from '@nestjs/typeorm';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AccessTokens, ACCESS_TOKEN_AUDIENCE } from '../../src/modules/access/access-tokens';
import { SigningKeys } from '../../src/modules/access/signing-keys.service';
import { PlatformTokens } from '../../src/modules/providers/auth/platform-tokens';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, OnboardedDeveloper, registerApp, RegisteredApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { login, LoggedInUser } from '../support/users';
import { expectCleanError } from './envelopes';

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * Forged, stolen, expired and escalated credentials against the user API and
 * the provider platform; replayed and mis-signed inbound webhooks. Every
 * refusal is a clean envelope of the path's dialect, never a 5xx.
 */
describe('auth abuse', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let app: NestFastifyApplication;
  let url: string;
  let dataSource: DataSource;
  let alice: LoggedInUser;
  let bob: LoggedInUser;
  let bobContactId: string;
  let devA: OnboardedDeveloper;
  let devB: OnboardedDeveloper;
  let appA: RegisteredApp;
  let appB: RegisteredApp;
  let appAAuth: { authorization: string };
  let packageB: string;
  let webhookSecretA: string;

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
    ({ app, url } = await env.startApi());
    dataSource = app.get(getDataSourceToken());
    await env.startWorker();
    alice = await login(url, idp, { sub: 'uid-alice', name: 'Alice', email: 'alice@example.com' });
    bob = await login(url, idp, { sub: 'uid-bob', name: 'Bob', email: 'bob@example.com' });
    bobContactId = (await request(url).post('/v1/contacts').set(bob.auth).send({ name: 'Bob’s secret friend' }).expect(201)).body.id;

    devA = await onboardDeveloper(url, smtp, 'dev-a@example.com');
    devB = await onboardDeveloper(url, smtp, 'dev-b@example.com');
    appA = await registerApp(url, devA);
    appB = await registerApp(url, devB, { name: 'Other Co' });
    appAAuth = { authorization: `Bearer ${await appToken(url, appA)}` };
    const appBAuth = { authorization: `Bearer ${await appToken(url, appB)}` };
    const capabilities = (goodPackageCapabilities() as Array<{ type: string }>).filter((c) => c.type !== 'action');
    packageB = (
      await request(url)
        .post('/v1/providers/packages')
        .set(appBAuth)
        .send({
          appId: appB.id,
          name: 'B Bank',
          slug: 'b-bank',
          description: 'Balances',
          riskTier: 'data_only',
          runtimeUrl: runtime.url,
          capabilities,
        })
        .expect(201)
    ).body.id;
    await request(url)
      .post('/v1/providers/packages')
      .set(appAAuth)
      .send({
        appId: appA.id,
        name: 'A Bank',
        slug: 'a-bank',
        description: 'Balances',
        riskTier: 'data_only',
        runtimeUrl: runtime.url,
        capabilities,
      })
      .expect(201);
    webhookSecretA = (
      await request(url)
        .put(`/v1/providers/apps/${appA.id}/webhook`)
        .set(appAAuth)
        .send({ event_types: ['*'], url: 'https://127.0.0.1:9/hooks' })
        .expect(201)
    ).body.secret;
  }, 90_000);

  afterAll(async () => {
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  const me = (authorization: string) => request(url).get('/v1/me').set({ authorization });

  describe('user tokens', () => {
    function claimsOf(token: string) {
      return { header: decodeProtectedHeader(token), payload: decodeJwt(token) };
    }

    it('refuses alg none (with and without a signature part), in every case spelling', async () => {
      const { header, payload } = claimsOf(alice.token);
      for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
        const unsigned = `${b64url({ ...header, alg })}.${b64url(payload)}`;
        for (const token of [`${unsigned}.`, unsigned, `${unsigned}.${alice.token.split('.')[2]}`]) {
          const res = await me(`Bearer ${token}`);
          expectCleanError(res, '/v1/me', { status: 401, code: 'UNAUTHORIZED' });
        }
      }
    });

    it('refuses a token signed with a wrong key, even when it claims the real kid', async () => {
      const { header, payload } = claimsOf(alice.token);
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const forged = await new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid: header.kid, typ: header.typ }).sign(privateKey);
      expectCleanError(await me(`Bearer ${forged}`), '/v1/me', { status: 401, code: 'UNAUTHORIZED' });
      const otherKid = await new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid: 'attacker' }).sign(privateKey);
      expectCleanError(await me(`Bearer ${otherKid}`), '/v1/me', { status: 401, code: 'UNAUTHORIZED' });
    });

    it('refuses HS256 keyed with the service’s public key (algorithm confusion)', async () => {
      const { header, payload } = claimsOf(alice.token);
      const jwks = (await request(url).get('/.well-known/jwks.json').expect(200)).body as { keys: Array<Record<string, string>> };
      const jwk = jwks.keys.find((k) => k.kid === header.kid) ?? jwks.keys[0];
      const pem = createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
      const signingInput = `${b64url({ ...header, alg: 'HS256' })}.${b64url(payload)}`;
      const mac = createHmac('sha256', pem).update(signingInput).digest('base64url');
      expectCleanError(await me(`Bearer ${signingInput}.${mac}`), '/v1/me', { status: 401, code: 'UNAUTHORIZED' });
    });

    it('refuses a validly signed token carrying another user’s id with one’s own session', async () => {
      const sid = decodeJwt(alice.token).sid as string;
      const tokens = app.get(AccessTokens);
      const swapped = await tokens.issue(bob.id, sid, new Date(Date.now() + 600_000));
      expectCleanError(await me(`Bearer ${swapped}`), '/v1/me', { status: 401, code: 'UNAUTHORIZED' });
      const res = await request(url)
        .get(`/v1/contacts/${bobContactId}`)
        .set({ authorization: `Bearer ${swapped}` });
      expectCleanError(res, `/v1/contacts/${bobContactId}`, { status: 401 });
    });

    it('refuses an expired token and a token for another audience or issuer', async () => {
      const sid = decodeJwt(alice.token).sid as string;
      const expired = await app.get(AccessTokens).issue(alice.id, sid, new Date(Date.now() - 60_000));
      expectCleanError(await me(`Bearer ${expired}`), '/v1/me', { status: 401, code: 'UNAUTHORIZED' });
      const { kid, privateKey } = app.get(SigningKeys).signing;
      const sign = (aud: string, iss: string) =>
        new SignJWT({ sid })
          .setProtectedHeader({ alg: 'ES256', kid })
          .setIssuer(iss)
          .setAudience(aud)
          .setSubject(alice.id)
          .setIssuedAt()
          .setExpirationTime('10m')
          .sign(privateKey);
      const issuer = app.get(AccessTokens).issuer;
      expectCleanError(await me(`Bearer ${await sign('provider-platform', issuer)}`), '/v1/me', { status: 401 });
      expectCleanError(await me(`Bearer ${await sign(ACCESS_TOKEN_AUDIENCE, 'https://evil.example')}`), '/v1/me', { status: 401 });
    });

    it('refuses garbage bearer values cleanly', async () => {
      for (const value of [
        'Bearer',
        'Bearer ',
        'Bearer a.b.c',
        'Bearer ....',
        `Bearer ${'x'.repeat(8000)}`,
        'Basic Zm9vOmJhcg==',
        'Bearer e30.e30.',
      ]) {
        expectCleanError(await me(value), '/v1/me', { status: 401, code: 'UNAUTHORIZED' });
      }
    });

    it('does not show or change another user’s contact by id (404, nothing changed)', async () => {
      const path = `/v1/contacts/${bobContactId}`;
      expectCleanError(await request(url).get(path).set(alice.auth), path, { status: 404, code: 'NOT_FOUND' });
      expectCleanError(await request(url).patch(path).set(alice.auth).send({ name: 'pwned' }), path, { status: 404 });
      expectCleanError(await request(url).delete(path).set(alice.auth), path, { status: 404 });
      const still = await request(url).get(path).set(bob.auth).expect(200);
      expect(still.body.name).toBe('Bob’s secret friend');
    });

    it('does not accept a user token on the platform nor an app token on the user API', async () => {
      expectCleanError(await request(url).get('/v1/providers/apps').set(alice.auth), '/v1/providers/apps', { status: 401 });
      expectCleanError(await request(url).get('/v1/me').set(appAAuth), '/v1/me', { status: 401, code: 'UNAUTHORIZED' });
      expectCleanError(
        await request(url)
          .get('/v1/providers/apps')
          .set(devA.auth)
          .set({ authorization: `Bearer ${alice.token}` }),
        '/v1/providers/apps',
        {
          status: 401,
        },
      );
    });
  });

  describe('platform tokens', () => {
    it('a token narrowed to packages:read cannot call write routes (403 insufficient_scope naming the scope)', async () => {
      const narrow = { authorization: `Bearer ${await appToken(url, appA, 'packages:read')}` };
      await request(url).get('/v1/providers/packages').set(narrow).expect(200);
      const writes: Array<[string, string, Record<string, unknown>]> = [
        [
          'post',
          '/v1/providers/packages',
          {
            appId: appA.id,
            name: 'Escalated',
            slug: 'escalated',
            description: 'x',
            riskTier: 'data_only',
            runtimeUrl: runtime.url,
            capabilities: [],
          },
        ],
        ['put', `/v1/providers/apps/${appA.id}/webhook`, { event_types: ['*'] }],
        ['patch', `/v1/providers/apps/${appA.id}`, { name: 'Escalated' }],
        ['post', `/v1/providers/apps/${appA.id}/secret`, {}],
      ];
      for (const [method, path, body] of writes) {
        const res = await (request(url) as unknown as Record<string, (p: string) => request.Test>)[method](path).set(narrow).send(body);
        expectCleanError(res, path, { status: 403, code: 'insufficient_scope' });
      }
      const rows: unknown[] = await dataSource.query(`SELECT id FROM packages WHERE slug = 'escalated'`);
      expect(rows).toHaveLength(0);
    });

    it('a token cannot widen its scope beyond the app’s at the token endpoint', async () => {
      const narrowApp = await registerApp(url, devA, { name: 'Narrow', scopes: ['packages:read'] }).catch(() => undefined);
      if (narrowApp) {
        const res = await request(url)
          .post('/v1/auth/token')
          .auth(narrowApp.client_id, narrowApp.client_secret)
          .type('form')
          .send({ grant_type: 'client_credentials', scope: 'packages:write' });
        expectCleanError(res, '/v1/auth/token', {});
        expect([400, 403]).toContain(res.status);
      }
      const unknown = await request(url)
        .post('/v1/auth/token')
        .auth(appA.client_id, appA.client_secret)
        .type('form')
        .send({ grant_type: 'client_credentials', scope: 'admin:all' });
      expectCleanError(unknown, '/v1/auth/token', {});
      expect([400, 403]).toContain(unknown.status);
      const wrongSecret = await request(url)
        .post('/v1/auth/token')
        .auth(appA.client_id, 'nope')
        .type('form')
        .send({ grant_type: 'client_credentials' });
      expectCleanError(wrongSecret, '/v1/auth/token', { status: 401 });
    });

    it('another developer’s ids in paths answer 403/404 and change nothing', async () => {
      const paths: Array<[string, string, Record<string, unknown>?]> = [
        ['get', `/v1/providers/apps/${appB.id}`],
        ['patch', `/v1/providers/apps/${appB.id}`, { name: 'Stolen' }],
        ['post', `/v1/providers/apps/${appB.id}/secret`, {}],
        ['get', `/v1/providers/apps/${appB.id}/webhook`],
        ['put', `/v1/providers/apps/${appB.id}/webhook`, { event_types: ['*'], url: 'https://attacker.example/hooks' }],
        ['get', `/v1/providers/packages/${packageB}`],
        ['post', `/v1/providers/packages/${packageB}/versions`, { version: '9.0.0', capabilities: [] }],
      ];
      for (const auth of [appAAuth, devA.auth]) {
        for (const [method, path, body] of paths) {
          let req = (request(url) as unknown as Record<string, (p: string) => request.Test>)[method](path).set(auth);
          if (body) req = req.send(body);
          const res = await req;
          expectCleanError(res, path, {});
          expect([403, 404]).toContain(res.status);
        }
      }
      const appRow: Array<{ name: string }> = await dataSource.query(`SELECT name FROM apps WHERE id = $1`, [appB.id]);
      expect(appRow[0].name).toBe('Other Co');
      const versions: unknown[] = await dataSource.query(`SELECT id FROM package_versions WHERE package_id = $1`, [packageB]);
      expect(versions).toHaveLength(1);
    });

    it('refuses forged, expired and alg-none platform tokens with invalid_token / token_expired', async () => {
      const real = await appToken(url, appA);
      const header = decodeProtectedHeader(real);
      const payload = decodeJwt(real);
      const none = `${b64url({ ...header, alg: 'none' })}.${b64url({ ...payload, scope: 'packages:write apps:write' })}.`;
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const forged = await new SignJWT({ ...payload, dev: devB.id })
        .setProtectedHeader({ alg: 'ES256', kid: header.kid, typ: header.typ })
        .sign(privateKey);
      for (const token of [none, forged]) {
        const res = await request(url)
          .get('/v1/providers/packages')
          .set({ authorization: `Bearer ${token}` });
        expectCleanError(res, '/v1/providers/packages', { status: 401, code: 'invalid_token' });
      }
      const expired = await app
        .get(PlatformTokens)
        .forApp({ id: appA.id, developerId: devA.id }, ['packages:read'], new Date(Date.now() - 60_000));
      const res = await request(url)
        .get('/v1/providers/packages')
        .set({ authorization: `Bearer ${expired}` });
      expectCleanError(res, '/v1/providers/packages', { status: 401, code: 'token_expired' });
    });
  });

  describe('inbound webhooks', () => {
    const post = (raw: string, secret: string) =>
      request(url)
        .post('/v1/providers/runtime/webhook')
        .set(appAAuth)
        .set('content-type', 'application/json')
        .set('X-Signature-256', `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`)
        .send(raw);
    const event = () =>
      JSON.stringify({
        event: 'meeting.updated',
        action: 'moved',
        timestamp: new Date().toISOString(),
        userId: 'usr_someone',
        data: { meetingId: `mtg_${Date.now()}`, startsAt: '2026-02-01T10:00:00Z' },
      });

    it('processes a replayed body and signature once', async () => {
      const raw = event();
      const answers = [];
      for (let i = 0; i < 3; i += 1) answers.push(await post(raw, webhookSecretA).expect(202));
      // and concurrently
      answers.push(...(await Promise.all([post(raw, webhookSecretA), post(raw, webhookSecretA)])));
      const ids = new Set(answers.map((a) => a.body.event_id as string));
      expect(answers.every((a) => a.status === 202)).toBe(true);
      expect(ids.size).toBe(1);
      const rows: unknown[] = await dataSource.query(
        `SELECT id FROM events WHERE type = 'provider_event.received' AND payload->>'event_id' = $1`,
        [[...ids][0]],
      );
      expect(rows).toHaveLength(1);
    });

    it('refuses a signature made with the wrong secret, another app’s secret or over other bytes (401 invalid_signature)', async () => {
      const raw = event();
      for (const secret of ['whsec_wrong', webhookSecretA.slice(0, -2), '']) {
        expectCleanError(await post(raw, secret), '/v1/providers/runtime/webhook', { status: 401, code: 'invalid_signature' });
      }
      const signedOther = createHmac('sha256', webhookSecretA).update(event()).digest('hex');
      const res = await request(url)
        .post('/v1/providers/runtime/webhook')
        .set(appAAuth)
        .set('content-type', 'application/json')
        .set('X-Signature-256', `sha256=${signedOther}`)
        .send(raw);
      expectCleanError(res, '/v1/providers/runtime/webhook', { status: 401, code: 'invalid_signature' });
      const count: Array<{ n: string }> = await dataSource.query(
        `SELECT count(*) AS n FROM events WHERE type = 'provider_event.received' AND payload::text LIKE $1`,
        [`%${JSON.parse(raw).data.meetingId as string}%`],
      );
      expect(count[0].n).toBe('0');
    });
  });
});
