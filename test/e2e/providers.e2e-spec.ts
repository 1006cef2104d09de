import { createLocalJWKSet, jwtVerify } from 'jose';
import { Issuer, errors as oidcErrors } from 'openid-client';
import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { OAuthTokens } from '../../src/modules/providers/oauth-tokens.service';
import { factories } from '../support/factories';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { appToken, DEVELOPER_PASSWORD, onboardDeveloper, registerApp } from '../support/providers';
import { SmtpSink, verificationToken } from '../support/smtp-sink';
import { freshTotp } from '../support/totp';

const problemType = (code: string) => `https://docs.example.com/developers/errors#${code}`;

describe('provider platform: accounts, verification, login, apps, OAuth tokens', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let url: string;
  let dataSource: DataSource;
  let oauth: OAuthTokens;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url });
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    oauth = api.app.get(OAuthTokens);
    await env.startWorker(); // sends the outbox mail through SMTP
  });
  afterAll(async () => {
    await env.close();
    await smtp.close();
  });

  const oauthClient = async (
    clientId: string,
    clientSecret: string,
    method: 'client_secret_basic' | 'client_secret_post' = 'client_secret_basic',
  ) => {
    const issuer = new Issuer({ issuer: url, token_endpoint: `${url}/v1/auth/token` });
    return new issuer.Client({ client_id: clientId, client_secret: clientSecret, token_endpoint_auth_method: method });
  };

  it('walks the three onboarding steps: account, email verification by link, app registration', async () => {
    const created = await request(url)
      .post('/v1/providers/account')
      .send({ company_name: 'Initech', email: 'dev@initech.example', password: DEVELOPER_PASSWORD })
      .expect(202);
    expect(created.body).toEqual({ email: 'dev@initech.example', message: expect.stringContaining('dev@initech.example') });
    expect(JSON.stringify(created.body)).not.toContain(DEVELOPER_PASSWORD);
    const [{ password_hash }] = await dataSource.query(`SELECT password_hash FROM developers WHERE email = 'dev@initech.example'`);
    expect(password_hash).toMatch(/^\$argon2id\$/);

    const mail = await smtp.mailTo('dev@initech.example');
    expect(mail.subject).toMatch(/verify/i);
    const token = verificationToken(mail);
    const [{ count }] = await dataSource.query(`SELECT count(*)::int AS count FROM email_verifications WHERE token_hash = $1`, [token]);
    expect(count).toBe(0); // only the hash is stored

    const login = await request(url)
      .post('/v1/providers/auth/login')
      .send({ email: 'dev@initech.example', password: DEVELOPER_PASSWORD })
      .expect(200);
    const auth = { authorization: `Bearer ${login.body.token}` };
    const account = await request(url).get('/v1/providers/account').set(auth).expect(200);
    expect(account.body).toEqual({
      id: expect.stringMatching(/^dev_/),
      company_name: 'Initech',
      email: 'dev@initech.example',
      email_verified: false,
      email_verified_at: null,
      mfa_enabled: false,
      status: 'active',
      created_at: expect.any(String),
    });
    const early = await request(url).post('/v1/providers/apps').set(auth).send({ name: 'Too early' }).expect(403);
    expect(early.body).toMatchObject({ type: problemType('email_not_verified'), status: 403 });

    const verified = await request(url).post('/v1/providers/account/verify').send({ token }).expect(200);
    expect(verified.body).toMatchObject({ email_verified: true, email_verified_at: expect.any(String) });

    const app = await request(url)
      .post('/v1/providers/apps')
      .set(auth)
      .send({
        name: 'Initech Sync',
        description: 'TPS reports',
        redirect_uris: ['https://initech.example/cb'],
        webhook_url: 'https://initech.example/hooks',
      })
      .expect(201);
    expect(app.body).toEqual({
      id: expect.stringMatching(/^app_/),
      name: 'Initech Sync',
      description: 'TPS reports',
      redirect_uris: ['https://initech.example/cb'],
      webhook_url: 'https://initech.example/hooks',
      scopes: expect.arrayContaining(['packages:write', 'capabilities:execute']),
      client_id: expect.stringMatching(/^cid_/),
      client_secret: expect.stringMatching(/^cs_/),
      tier: 'free',
      webhook_secret: expect.stringMatching(/^whsec_/),
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const read = await request(url).get(`/v1/providers/apps/${app.body.id}`).set(auth).expect(200);
    expect(read.body).not.toHaveProperty('client_secret');
    expect(read.body).not.toHaveProperty('webhook_secret');
    // The webhook_url gave the app a working profile: every event type, the default timeout, the secret never shown again.
    const profile = await request(url).get(`/v1/providers/apps/${app.body.id}/webhook`).set(auth).expect(200);
    expect(profile.body).toMatchObject({ url: 'https://initech.example/hooks', event_types: ['*'], timeout_seconds: 5, enabled: true });
    expect(profile.body).not.toHaveProperty('webhook_secret');
    const [{ client_secret_hash }] = await dataSource.query(`SELECT client_secret_hash FROM apps WHERE id = $1`, [app.body.id]);
    expect(client_secret_hash).not.toContain(app.body.client_secret);

    // A real OAuth client library obtains a token with the credentials.
    const client = await oauthClient(app.body.client_id, app.body.client_secret);
    const tokenSet = await client.grant({ grant_type: 'client_credentials' });
    expect(tokenSet.token_type?.toLowerCase()).toBe('bearer');
    expect(tokenSet.expires_in).toBeGreaterThan(3590);
    const jwks = await request(url).get('/.well-known/jwks.json').expect(200);
    const { payload } = await jwtVerify(tokenSet.access_token!, createLocalJWKSet(jwks.body));
    expect(payload.sub).toBe(app.body.id);
  });

  describe('account creation', () => {
    it('answers a duplicate email (any case) as a new one and keeps the first account', async () => {
      await request(url)
        .post('/v1/providers/account')
        .send({ company_name: 'A', email: 'dup@example.com', password: DEVELOPER_PASSWORD })
        .expect(202);
      const res = await request(url)
        .post('/v1/providers/account')
        .send({ company_name: 'B', email: 'DUP@example.com', password: 'another long password' })
        .expect(202);
      expect(res.body).toEqual({ email: 'DUP@example.com', message: expect.stringContaining('DUP@example.com') });
      const rows = await dataSource.query(`SELECT company_name FROM developers WHERE lower(email) = 'dup@example.com'`);
      expect(rows).toEqual([{ company_name: 'A' }]);
    });

    it.each([
      [{ company_name: 'A', email: 'not-an-email', password: DEVELOPER_PASSWORD }, 'invalid_format', 'email'],
      [{ company_name: 'A', email: 'short@example.com', password: 'short' }, 'invalid_format', 'password'],
      [{ company_name: 'A', email: 'same@example.com', password: 'xx-same@example.com-xx' }, 'invalid_format', 'password'],
      [{ email: 'nocompany@example.com', password: DEVELOPER_PASSWORD }, 'missing_field', 'company_name'],
    ])('refuses %j with %s on %s', async (body, code, fieldName) => {
      const res = await request(url).post('/v1/providers/account').send(body).expect(400);
      expect(res.body).toMatchObject({ type: problemType(code), field: fieldName });
    });
  });

  describe('email verification', () => {
    it('refuses an unknown token', async () => {
      const res = await request(url).post('/v1/providers/account/verify').send({ token: 'vt_unknown' }).expect(400);
      expect(res.body.detail).toMatch(/unknown/);
    });

    it('refuses a reused token', async () => {
      await request(url)
        .post('/v1/providers/account')
        .send({ company_name: 'R', email: 'reuse@example.com', password: DEVELOPER_PASSWORD })
        .expect(202);
      const token = verificationToken(await smtp.mailTo('reuse@example.com'));
      await request(url).post('/v1/providers/account/verify').send({ token }).expect(200);
      const res = await request(url).post('/v1/providers/account/verify').send({ token }).expect(400);
      expect(res.body.detail).toMatch(/already used/);
    });

    it('refuses a token older than 24 hours', async () => {
      await request(url)
        .post('/v1/providers/account')
        .send({ company_name: 'E', email: 'expired@example.com', password: DEVELOPER_PASSWORD })
        .expect(202);
      const token = verificationToken(await smtp.mailTo('expired@example.com'));
      await factories(dataSource).expireEmailVerification('expired@example.com');
      const res = await request(url).post('/v1/providers/account/verify').send({ token }).expect(400);
      expect(res.body.detail).toMatch(/expired/);
    });

    it('sends a new link on resend and the old one stops working; resending again at once is limited', async () => {
      const developer = await onboardDeveloper(url, smtp, 'resend@example.com', { verify: false });
      const oldToken = verificationToken(await smtp.mailTo('resend@example.com'));
      await request(url).post('/v1/providers/account/verify/resend').set(developer.auth).expect(202);
      const newToken = verificationToken(await smtp.mailTo('resend@example.com', 1));
      expect(newToken).not.toBe(oldToken);
      const again = await request(url).post('/v1/providers/account/verify/resend').set(developer.auth).expect(429);
      expect(Number(again.headers['retry-after'])).toBeGreaterThan(0);
      expect((await request(url).post('/v1/providers/account/verify').send({ token: oldToken }).expect(400)).body.detail).toMatch(
        /replaced/,
      );
      await request(url).post('/v1/providers/account/verify').send({ token: newToken }).expect(200);
    });
  });

  describe('developer login', () => {
    it('answers an unknown email and a wrong password identically', async () => {
      await onboardDeveloper(url, smtp, 'login@example.com');
      const wrong = await request(url)
        .post('/v1/providers/auth/login')
        .send({ email: 'login@example.com', password: 'not the password' })
        .expect(401);
      const unknown = await request(url)
        .post('/v1/providers/auth/login')
        .send({ email: 'nobody@example.com', password: 'not the password' })
        .expect(401);
      expect(wrong.body.detail).toBe(unknown.body.detail);
      expect(wrong.body.type).toBe(unknown.body.type);
    });

    it('locks an email after five failures, even for the right password', async () => {
      await onboardDeveloper(url, smtp, 'lock@example.com');
      for (let i = 0; i < 5; i += 1)
        await request(url)
          .post('/v1/providers/auth/login')
          .send({ email: 'lock@example.com', password: `wrong ${i}` })
          .expect(401);
      const locked = await request(url)
        .post('/v1/providers/auth/login')
        .send({ email: 'lock@example.com', password: DEVELOPER_PASSWORD })
        .expect(429);
      expect(locked.body.type).toBe(problemType('rate_limit_exceeded'));
      expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    });

    it('requires the TOTP code once MFA is on', async () => {
      const developer = await onboardDeveloper(url, smtp, 'mfa@example.com');
      const enrol = await request(url).post('/v1/providers/account/mfa').set(developer.auth).expect(200);
      expect(enrol.body.otpauth_uri).toMatch(/^otpauth:\/\/totp\//);
      await request(url).post('/v1/providers/account/mfa/confirm').set(developer.auth).send({ code: '000000' }).expect(400);
      const confirmation = await freshTotp(enrol.body.secret);
      const confirmed = await request(url)
        .post('/v1/providers/account/mfa/confirm')
        .set(developer.auth)
        .send({ code: confirmation.code })
        .expect(200);
      expect(confirmed.body.mfa_enabled).toBe(true);

      const without = await request(url)
        .post('/v1/providers/auth/login')
        .send({ email: 'mfa@example.com', password: DEVELOPER_PASSWORD })
        .expect(401);
      expect(without.body.type).toBe(problemType('mfa_required'));
      await request(url)
        .post('/v1/providers/auth/login')
        .send({ email: 'mfa@example.com', password: DEVELOPER_PASSWORD, totp: '123456' })
        .expect(401);
      // The code that confirmed enrolment was used up: the login takes a code of a later step.
      const { code } = await freshTotp(enrol.body.secret, { afterStep: confirmation.step });
      await request(url)
        .post('/v1/providers/auth/login')
        .send({ email: 'mfa@example.com', password: DEVELOPER_PASSWORD, totp: code })
        .expect(200);
    }, 60_000);
  });

  describe('apps', () => {
    it('refuses an http webhook URL with invalid_format', async () => {
      const developer = await onboardDeveloper(url, smtp, 'http@example.com');
      const res = await request(url)
        .post('/v1/providers/apps')
        .set(developer.auth)
        .send({ name: 'X', webhook_url: 'http://acme.example/hooks' })
        .expect(400);
      expect(res.body).toMatchObject({ type: problemType('invalid_format'), field: 'webhook_url' });
      const app = await registerApp(url, developer);
      const runtime = await request(url)
        .patch(`/v1/providers/runtime/apps/${app.id}`)
        .set(developer.auth)
        .send({ webhook_url: 'http://acme.example/x' })
        .expect(400);
      expect(runtime.body.field).toBe('webhook_url');
      const ok = await request(url)
        .patch(`/v1/providers/runtime/apps/${app.id}`)
        .set(developer.auth)
        .send({ webhook_url: 'https://acme.example/v2/hooks' })
        .expect(200);
      expect(ok.body.webhook_url).toBe('https://acme.example/v2/hooks');
    });

    it('refuses loopback and private webhook targets unless ALLOW_PRIVATE_TARGETS=true', async () => {
      const strict = await env.startApi({ env: { ALLOW_PRIVATE_TARGETS: 'false' } });
      const developer = await onboardDeveloper(strict.url, smtp, 'ssrf@example.com');
      for (const target of [
        'https://127.0.0.1/hooks',
        'https://10.1.2.3/hooks',
        'https://[::1]/hooks',
        'https://localhost/hooks',
        'https://169.254.169.254/latest',
      ]) {
        const res = await request(strict.url)
          .post('/v1/providers/apps')
          .set(developer.auth)
          .send({ name: 'X', webhook_url: target })
          .expect(400);
        expect(res.body).toMatchObject({ type: problemType('invalid_format'), field: 'webhook_url' });
      }
      await request(strict.url)
        .post('/v1/providers/apps')
        .set(developer.auth)
        .send({ name: 'X', webhook_url: 'https://93.184.216.34/hooks' })
        .expect(201);
    });

    it("answers 403 insufficient_scope for another developer's app", async () => {
      const owner = await onboardDeveloper(url, smtp, 'owner@example.com');
      const other = await onboardDeveloper(url, smtp, 'other@example.com');
      const app = await registerApp(url, owner);
      for (const call of [
        request(url).get(`/v1/providers/apps/${app.id}`),
        request(url).patch(`/v1/providers/apps/${app.id}`).send({ name: 'mine now' }),
        request(url).post(`/v1/providers/apps/${app.id}/secret`),
        request(url).patch(`/v1/providers/runtime/apps/${app.id}`).send({ webhook_url: 'https://evil.example/x' }),
      ]) {
        const res = await call.set(other.auth).expect(403);
        expect(res.body.type).toBe(problemType('insufficient_scope'));
      }
      const listed = await request(url).get('/v1/providers/apps').set(other.auth).expect(200);
      expect(listed.body.apps).toEqual([]);
      await request(url).get('/v1/providers/apps/app_0000000000000000000000').set(other.auth).expect(404);
    });

    it('rotates the client secret: the old one stops at once, or after a grace period', async () => {
      const developer = await onboardDeveloper(url, smtp, 'rotate@example.com');
      const app = await registerApp(url, developer);
      const rotated = await request(url).post(`/v1/providers/apps/${app.id}/secret`).set(developer.auth).send({}).expect(200);
      expect(rotated.body.client_secret).not.toBe(app.client_secret);
      await request(url)
        .post('/v1/auth/token')
        .auth(app.client_id, app.client_secret)
        .type('form')
        .send({ grant_type: 'client_credentials' })
        .expect(401);
      await appToken(url, { ...app, client_secret: rotated.body.client_secret });

      const graceful = await request(url)
        .post(`/v1/providers/apps/${app.id}/secret`)
        .set(developer.auth)
        .send({ grace_period_seconds: 3600 })
        .expect(200);
      await appToken(url, { ...app, client_secret: rotated.body.client_secret }); // previous still valid
      await appToken(url, { ...app, client_secret: graceful.body.client_secret });
    });
  });

  describe('token endpoint', () => {
    it('accepts Basic, form and JSON client authentication and narrows scope', async () => {
      const developer = await onboardDeveloper(url, smtp, 'tokens@example.com');
      const app = await registerApp(url, developer);
      const viaPost = await oauthClient(app.client_id, app.client_secret, 'client_secret_post');
      const narrowed = await viaPost.grant({ grant_type: 'client_credentials', scope: 'packages:read' });
      expect(narrowed.scope).toBe('packages:read');
      const json = await request(url)
        .post('/v1/auth/token')
        .send({ grant_type: 'client_credentials', client_id: app.client_id, client_secret: app.client_secret })
        .expect(200);
      expect(json.body).toEqual({
        access_token: expect.any(String),
        token_type: 'Bearer',
        expires_in: 3600,
        scope: expect.stringContaining('apps:read'),
      });
      expect(json.headers['cache-control']).toBe('no-store');
    });

    it('reports errors with both the OAuth error members and problem details', async () => {
      const developer = await onboardDeveloper(url, smtp, 'tokenerr@example.com');
      const app = await registerApp(url, developer, { scopes: ['apps:read', 'packages:read'] });

      const wrong = await oauthClient(app.client_id, 'cs_wrong');
      const failure = await wrong.grant({ grant_type: 'client_credentials' }).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(oidcErrors.OPError);
      expect((failure as InstanceType<typeof oidcErrors.OPError>).error).toBe('invalid_client');
      const raw = await request(url)
        .post('/v1/auth/token')
        .auth(app.client_id, 'cs_wrong')
        .type('form')
        .send({ grant_type: 'client_credentials' })
        .expect(401);
      expect(raw.headers['www-authenticate']).toMatch(/^Basic/);
      expect(raw.body).toMatchObject({
        type: problemType('invalid_client'),
        status: 401,
        error: 'invalid_client',
        error_description: expect.any(String),
        instance: '/v1/auth/token',
      });

      const good = await oauthClient(app.client_id, app.client_secret);
      const scopeFailure = await good.grant({ grant_type: 'client_credentials', scope: 'packages:write' }).catch((e: unknown) => e);
      expect((scopeFailure as InstanceType<typeof oidcErrors.OPError>).error).toBe('invalid_scope');
      const grantFailure = await good.grant({ grant_type: 'password', username: 'x', password: 'y' }).catch((e: unknown) => e);
      expect((grantFailure as InstanceType<typeof oidcErrors.OPError>).error).toBe('unsupported_grant_type');
    });

    it('rotates refresh tokens and revokes the family when an old one is reused', async () => {
      const developer = await onboardDeveloper(url, smtp, 'refresh@example.com');
      const app = await registerApp(url, developer);
      const { id: user_id } = await factories(dataSource).user({
        id: 'usr_refreshUser00000000000',
        idpSubject: 'uid-refresh',
        name: 'R',
        email: 'r@example.com',
      });
      const grant = await dataSource.transaction((manager) =>
        oauth.issueDelegated(
          manager,
          { id: app.id, developerId: developer.id },
          { userId: user_id, installId: 'inst_refreshInstall0000000', scopes: ['capabilities:execute'] },
        ),
      );
      const client = await oauthClient(app.client_id, app.client_secret);
      const first = await client.refresh(grant.refresh_token);
      expect(first.refresh_token).toBeDefined();
      expect(first.refresh_token).not.toBe(grant.refresh_token);
      const { payload } = await jwtVerify(first.access_token!, createLocalJWKSet((await request(url).get('/.well-known/jwks.json')).body));
      expect(payload).toMatchObject({ uid: user_id, iid: 'inst_refreshInstall0000000', scope: 'capabilities:execute' });

      const reuse = await client.refresh(grant.refresh_token).catch((e: unknown) => e);
      expect((reuse as InstanceType<typeof oidcErrors.OPError>).error).toBe('invalid_grant');
      // The whole family is revoked, including the token issued by the legitimate rotation.
      const afterTheft = await client.refresh(first.refresh_token!).catch((e: unknown) => e);
      expect((afterTheft as InstanceType<typeof oidcErrors.OPError>).error).toBe('invalid_grant');
    });
  });

  describe('platform authentication and limits', () => {
    it('answers 401 for a missing or malformed bearer and 403 insufficient_scope naming a missing scope', async () => {
      await request(url).get('/v1/providers/apps').expect(401);
      const malformed = await request(url).get('/v1/providers/apps').set('authorization', 'Bearer abc.def.ghi').expect(401);
      expect(malformed.body.type).toBe(problemType('invalid_token'));
      const developer = await onboardDeveloper(url, smtp, 'scopes@example.com');
      const app = await registerApp(url, developer);
      const readOnly = await appToken(url, app, 'apps:read');
      await request(url).get(`/v1/providers/apps/${app.id}`).set('authorization', `Bearer ${readOnly}`).expect(200);
      const res = await request(url)
        .patch(`/v1/providers/runtime/apps/${app.id}`)
        .set('authorization', `Bearer ${readOnly}`)
        .send({ webhook_url: 'https://acme.example/new' })
        .expect(403);
      expect(res.body).toMatchObject({ type: problemType('insufficient_scope'), detail: expect.stringContaining('apps:write') });
    });

    it('answers 401 token_expired for an expired token', async () => {
      const developer = await onboardDeveloper(url, smtp, 'expiry@example.com');
      const app = await registerApp(url, developer);
      // Same database and signing key, but tokens issued there live one second.
      const shortLived = await env.startApi({ env: { PLATFORM_TOKEN_TTL_SECONDS: '1' } });
      const token = await appToken(shortLived.url, app);
      await new Promise((r) => setTimeout(r, 2100));
      const res = await request(shortLived.url).get('/v1/providers/apps').set('authorization', `Bearer ${token}`).expect(401);
      expect(res.body.type).toBe(problemType('token_expired'));
    });

    it('lets the operator suspend a developer account: console and app tokens, login and token grants answer account_suspended until reinstated', async () => {
      const operator = { authorization: `Bearer ${OPERATOR_TOKEN}` };
      const developer = await onboardDeveloper(url, smtp, 'suspended@example.com');
      const app = await registerApp(url, developer, { webhook_url: undefined });
      const appAuth = { authorization: `Bearer ${await appToken(url, app)}` };

      // Only the operator token opens the operator API.
      await request(url).post(`/v1/operator/developers/${developer.id}/suspend`).send({ reason: 'x' }).expect(401);
      await request(url).post(`/v1/operator/developers/${developer.id}/suspend`).set(developer.auth).send({ reason: 'x' }).expect(401);
      await request(url).post(`/v1/operator/developers/${developer.id}/suspend`).set(appAuth).send({ reason: 'x' }).expect(401);
      const noReason = await request(url).post(`/v1/operator/developers/${developer.id}/suspend`).set(operator).send({}).expect(400);
      expect(noReason.body).toMatchObject({ status: 400, field: 'reason' });
      await request(url).post('/v1/operator/developers/dev_unknown/suspend').set(operator).send({ reason: 'x' }).expect(404);
      await request(url).post("/v1/operator/developers/'%3B--/suspend").set(operator).send({ reason: 'x' }).expect(404);

      const suspended = await request(url)
        .post(`/v1/operator/developers/${developer.id}/suspend`)
        .set(operator)
        .send({ reason: 'Phishing reports against Acme Calendar' })
        .expect(200);
      expect(suspended.body).toEqual({
        id: developer.id,
        company_name: 'Acme Tools',
        email: 'suspended@example.com',
        status: 'suspended',
        suspended_at: expect.any(String),
        suspension_reason: 'Phishing reports against Acme Calendar',
      });
      const notice = await smtp.mailTo('suspended@example.com', 1);
      expect(notice.subject).toMatch(/suspended/i);
      expect(notice.text).toContain('Phishing reports against Acme Calendar');
      await request(url).post(`/v1/operator/developers/${developer.id}/suspend`).set(operator).send({ reason: 'again' }).expect(409);

      const suspendedProblem = expect.objectContaining({ type: problemType('account_suspended'), status: 403 });
      expect((await request(url).get('/v1/providers/apps').set(developer.auth).expect(403)).body).toEqual(suspendedProblem);
      expect((await request(url).get('/v1/providers/apps').set(appAuth).expect(403)).body).toEqual(suspendedProblem);
      expect((await request(url).get('/v1/providers/account').set(developer.auth).expect(403)).body).toEqual(suspendedProblem);
      const relogin = await request(url)
        .post('/v1/providers/auth/login')
        .send({ email: 'suspended@example.com', password: DEVELOPER_PASSWORD });
      expect(relogin.status).toBe(403);
      expect(relogin.body.type).toBe(problemType('account_suspended'));
      const grant = await request(url)
        .post('/v1/auth/token')
        .auth(app.client_id, app.client_secret)
        .type('form')
        .send({ grant_type: 'client_credentials' });
      expect(grant.status).toBe(403);
      expect(grant.body.type).toBe(problemType('account_suspended'));

      const reinstated = await request(url).post(`/v1/operator/developers/${developer.id}/reinstate`).set(operator).expect(200);
      expect(reinstated.body).toMatchObject({ status: 'active', suspended_at: null, suspension_reason: null });
      await request(url).post(`/v1/operator/developers/${developer.id}/reinstate`).set(operator).expect(409);
      await request(url).get('/v1/providers/apps').set(developer.auth).expect(200);
      await request(url).get('/v1/providers/apps').set(appAuth).expect(200);
      await request(url)
        .post('/v1/providers/auth/login')
        .send({ email: 'suspended@example.com', password: DEVELOPER_PASSWORD })
        .expect(200);
    });

    it('answers burst_limit past 10 requests in a second, with rate headers on every response', async () => {
      const developer = await onboardDeveloper(url, smtp, 'burst@example.com');
      const app = await registerApp(url, developer);
      // The spec's standard limits (the test environment raises them for every other test).
      const standard = await env.startApi({ env: { PLATFORM_BURST_PER_SECOND: '10', PLATFORM_RATE_LIMIT_PER_MINUTE: '600' } });
      const token = await appToken(standard.url, app);
      const answers = await Promise.all(
        Array.from({ length: 12 }, () => request(standard.url).get('/v1/providers/apps').set('authorization', `Bearer ${token}`)),
      );
      const refused = answers.filter((a) => a.status === 429);
      expect(refused.length).toBeGreaterThanOrEqual(1);
      expect(refused[0].body.type).toBe(problemType('burst_limit'));
      expect(Number(refused[0].headers['retry-after'])).toBeGreaterThanOrEqual(1);
      for (const answer of answers) {
        expect(answer.headers['x-ratelimit-limit']).toBeDefined();
        expect(Number(answer.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000 - 1);
      }
    });

    it('answers rate_limit_exceeded past the sustained per-minute limit', async () => {
      const limited = await env.startApi({ env: { PLATFORM_RATE_LIMIT_PER_MINUTE: '15', PLATFORM_BURST_PER_SECOND: '1000' } });
      const developer = await onboardDeveloper(limited.url, smtp, 'sustained@example.com');
      const app = await registerApp(limited.url, developer);
      const token = await appToken(limited.url, app);
      let last = await request(limited.url).get('/v1/providers/apps').set('authorization', `Bearer ${token}`);
      for (let i = 0; i < 15 && last.status === 200; i += 1)
        last = await request(limited.url).get('/v1/providers/apps').set('authorization', `Bearer ${token}`);
      expect(last.status).toBe(429);
      expect(last.body.type).toBe(problemType('rate_limit_exceeded'));
      expect(last.headers['x-ratelimit-limit']).toBe('15');
    });
  });
});
