import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import { createLocalJWKSet, jwtVerify } from 'jose';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { SESSION_CHECK_TTL_MS, SessionCache } from '../../src/modules/access/session-cache';
import { IDP_PROJECT, TestIdentityProvider } from '../support/identity-provider';
import { factories } from '../support/factories';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { LoggedInUser, login } from '../support/users';
import { waitFor } from '../support/wait-for';

describe('identity: login, access tokens, profile', () => {
  let env: TestEnvironment;
  let idp: TestIdentityProvider;
  let app: NestFastifyApplication;
  let url: string;
  let dataSource: DataSource;

  beforeAll(async () => {
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create(idp.env);
    ({ app, url } = await env.startApi());
    dataSource = app.get(getDataSourceToken());
  });
  afterAll(async () => {
    await env.close();
    await idp.close();
  });

  it('creates the user and an initial soul record at first login and returns a service token', async () => {
    const res = await request(url)
      .post('/v1/auth/login')
      .send({ firebase_token: await idp.token({ sub: 'uid-first', name: 'Grace Hopper', email: 'grace@example.com' }) })
      .expect(200);
    expect(res.body).toEqual({
      token: expect.any(String),
      expires_at: expect.any(String),
      user: { id: expect.stringMatching(/^usr_/), name: 'Grace Hopper', email: 'grace@example.com' },
    });
    const lifetime = Date.parse(res.body.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(3590_000);
    expect(lifetime).toBeLessThanOrEqual(3600_000);

    // The token is an ES256 JWT verifiable with the published key set.
    const jwks = await request(url).get('/.well-known/jwks.json').expect(200);
    const { payload, protectedHeader } = await jwtVerify(res.body.token, createLocalJWKSet(jwks.body), { audience: 'user-api' });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: jwks.body.keys[0].kid });
    expect(payload.sub).toBe(res.body.user.id);
    expect(jwks.body.keys[0]).not.toHaveProperty('d');

    const me = await request(url).get('/v1/me').set('authorization', `Bearer ${res.body.token}`).expect(200);
    expect(me.body).toEqual({
      id: res.body.user.id,
      name: 'Grace Hopper',
      email: 'grace@example.com',
      created_at: expect.any(String),
      soul_id: expect.stringMatching(/^soul_/),
    });
  });

  it('updates name and email at a later login without creating another user', async () => {
    const first = await login(url, idp, { sub: 'uid-later', name: 'Old Name', email: 'old@example.com' });
    const second = await login(url, idp, { sub: 'uid-later', name: 'New Name', email: 'new@example.com' });
    expect(second.id).toBe(first.id);
    const me = await request(url).get('/v1/me').set(second.auth).expect(200);
    expect(me.body).toMatchObject({ name: 'New Name', email: 'new@example.com' });
    const [{ count }] = await dataSource.query(`SELECT count(*)::int AS count FROM souls WHERE user_id = $1`, [first.id]);
    expect(count).toBe(1);
  });

  it('creates one user when the same first login races', async () => {
    const token = await idp.token({ sub: 'uid-race' });
    const answers = await Promise.all(Array.from({ length: 5 }, () => request(url).post('/v1/auth/login').send({ firebase_token: token })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.user.id)).size).toBe(1);
  });

  describe('refuses identity provider tokens with 401 UNAUTHORIZED', () => {
    const cases: Array<[string, () => Promise<string>]> = [
      ['a bad signature', async () => (await idp.token()).replace(/\.[^.]+$/, '.' + Buffer.from('forged').toString('base64url'))],
      ['the wrong audience', () => idp.token({ audience: 'someone-else' })],
      ['the wrong issuer', () => idp.token({ issuer: 'https://securetoken.google.com/other' })],
      ['an expired token', () => idp.token({ issuedAt: Math.floor(Date.now() / 1000) - 7200, expiresInSeconds: 3600 })],
      ['an unknown kid', () => idp.token({ unpublishedKey: true })],
      ['a token issued in the future', () => idp.token({ issuedAt: Math.floor(Date.now() / 1000) + 600 })],
      ['auth_time in the future', () => idp.token({ authTime: Math.floor(Date.now() / 1000) + 600 })],
      ['no auth_time', () => idp.token({ authTime: null })],
      ['an empty sub', () => idp.token({ sub: '' })],
      ['something that is not a JWT', async () => 'not-a-jwt'],
    ];
    it.each(cases)('%s', async (_name, make) => {
      const res = await request(url)
        .post('/v1/auth/login')
        .send({ firebase_token: await make() })
        .expect(401);
      expect(res.body).toEqual({
        error: { code: 'UNAUTHORIZED', message: expect.stringContaining('firebase_token was rejected'), status: 401 },
      });
    });
  });

  it('fetches the key set again when a token names a kid it has not seen (provider key rotation)', async () => {
    await login(url, idp, { sub: 'uid-before-rotation' });
    const before = idp.jwksRequests;
    await idp.rotate('key-2');
    await login(url, idp, { sub: 'uid-after-rotation' });
    expect(idp.jwksRequests).toBe(before + 1);
  });

  it('answers 400 BAD_REQUEST naming firebase_token when it is missing', async () => {
    const res = await request(url).post('/v1/auth/login').send({}).expect(400);
    expect(res.body.error).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    expect(res.body.error.message).toContain('firebase_token');
  });

  describe('user routes', () => {
    it('refuse a missing bearer with 401', async () => {
      const res = await request(url).get('/v1/me').expect(401);
      expect(res.body.error).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    });

    it('refuse a token signed by another key, an expired token and garbage with 401', async () => {
      const user = await login(url, idp, { sub: 'uid-tamper' });
      const [header, payload] = user.token.split('.');
      const tampered = `${header}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'usr_someoneelse' })).toString('base64url')}.${user.token.split('.')[2]}`;
      for (const token of [tampered, 'garbage', await idp.token()]) {
        await request(url).get('/v1/me').set('authorization', `Bearer ${token}`).expect(401);
      }
    });

    it('refuse a token after logout (revoked session)', async () => {
      const user = await login(url, idp, { sub: 'uid-logout' });
      await request(url).post('/v1/auth/logout').set(user.auth).expect(204);
      const res = await request(url).get('/v1/me').set(user.auth).expect(401);
      expect(res.body.error.message).toMatch(/session/);
    });

    it('refuse a token of a deleted user', async () => {
      const user = await login(url, idp, { sub: 'uid-deleted' });
      await factories(dataSource).deleteUserOutsideService(user.id);
      await request(url).get('/v1/me').set(user.auth).expect(401);
    });
  });

  describe('session checks remembered by each api instance', () => {
    let other: { app: NestFastifyApplication; url: string };
    /** Well below the time a remembered check stands, so only the notification can explain a refusal in time. */
    const PROPAGATION_MS = Math.min(2_000, SESSION_CHECK_TTL_MS / 4);

    beforeAll(async () => {
      other = await env.startApi();
    });

    /** Signs a user in; both instances check the session and remember it. */
    async function seenByBoth(sub: string, profile: { name?: string; email?: string } = {}): Promise<LoggedInUser> {
      const user = await login(url, idp, { sub, ...profile });
      for (const target of [url, other.url]) await request(target).get('/v1/me').set(user.auth).expect(200);
      // The first request opens each instance's listening connection; checks are remembered once it listens.
      await waitFor(() => [app, other.app].every((a) => a.get(SessionCache).remembering), { what: 'both session caches listening' });
      for (const target of [url, other.url]) await request(target).get('/v1/me').set(user.auth).expect(200);
      return user;
    }

    const refusedOn = (target: string, user: LoggedInUser) =>
      waitFor(async () => (await request(target).get('/v1/me').set(user.auth)).status === 401, {
        timeoutMs: PROPAGATION_MS,
        what: `a 401 from ${target}`,
      });

    it('refuses a token after logout at once on the instance that logged out, and on the other within moments', async () => {
      const user = await seenByBoth('uid-cached-logout');
      await request(url).post('/v1/auth/logout').set(user.auth).expect(204);
      const res = await request(url).get('/v1/me').set(user.auth).expect(401);
      expect(res.body.error.message).toMatch(/session/);
      await refusedOn(other.url, user);
    });

    it('refuses a token of a user deleted outside the service on every instance within moments', async () => {
      const user = await seenByBoth('uid-cached-deleted');
      await factories(dataSource).deleteUserOutsideService(user.id);
      await refusedOn(url, user);
      await refusedOn(other.url, user);
    });

    it('applies a tier change at once on the instance that made it, and on the other within moments', async () => {
      const user = await seenByBoth('uid-cached-tier');
      await request(other.url)
        .patch(`/v1/operator/users/${user.id}`)
        .set('authorization', `Bearer ${OPERATOR_TOKEN}`)
        .send({ tier: 'pro' })
        .expect(200);
      expect((await request(other.url).get('/v1/me').set(user.auth).expect(200)).headers['x-ratelimit-limit']).toBe('300');
      await waitFor(async () => (await request(url).get('/v1/me').set(user.auth)).headers['x-ratelimit-limit'] === '300', {
        timeoutMs: PROPAGATION_MS,
        what: 'the pro limit on the other instance',
      });
    });

    it('shows a new name from a later login and soul_id null after the soul is deleted', async () => {
      const first = await seenByBoth('uid-cached-profile', { name: 'Before', email: 'before@example.com' });
      await login(url, idp, { sub: 'uid-cached-profile', name: 'After', email: 'after@example.com' });
      expect((await request(url).get('/v1/me').set(first.auth).expect(200)).body).toMatchObject({
        name: 'After',
        email: 'after@example.com',
      });
      await waitFor(async () => (await request(other.url).get('/v1/me').set(first.auth)).body.name === 'After', {
        timeoutMs: PROPAGATION_MS,
        what: 'the new name on the other instance',
      });
      await request(other.url).delete('/v1/soul').set(first.auth).expect(200);
      expect((await request(other.url).get('/v1/me').set(first.auth).expect(200)).body.soul_id).toBeNull();
      await waitFor(async () => (await request(url).get('/v1/me').set(first.auth)).body.soul_id === null, {
        timeoutMs: PROPAGATION_MS,
        what: 'soul_id null on the other instance',
      });
    });
  });

  describe('rate limits', () => {
    it('counts the minute window in X-RateLimit-* and refuses the 61st request with 429 (401, 400 and unknown routes: provider-limits.e2e-spec.ts)', async () => {
      const user = await login(url, idp, { sub: 'uid-limited' });
      let last = await request(url).get('/v1/me').set(user.auth).expect(200);
      expect(last.headers['x-ratelimit-limit']).toBe('60');
      expect(last.headers['x-ratelimit-remaining']).toBe('59');
      const reset = Number(last.headers['x-ratelimit-reset']);
      expect(reset).toBeGreaterThan(Date.now() / 1000);
      expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);
      for (let i = 0; i < 59; i += 1) last = await request(url).get('/v1/me').set(user.auth);
      expect(last.status).toBe(200);
      expect(last.headers['x-ratelimit-remaining']).toBe('0');
      const refused = await request(url).get('/v1/me').set(user.auth).expect(429);
      expect(refused.body).toEqual({ error: { code: 'RATE_LIMITED', message: expect.any(String), status: 429 } });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    });

    it('gives a user moved to pro by the operator 300 requests a minute', async () => {
      const user = await login(url, idp, { sub: 'uid-pro' });
      await request(url)
        .patch(`/v1/operator/users/${user.id}`)
        .set('authorization', `Bearer ${OPERATOR_TOKEN}`)
        .send({ tier: 'pro' })
        .expect(200, { id: user.id, name: 'Ada Lovelace', email: 'ada@example.com', tier: 'pro' });
      const res = await request(url).get('/v1/me').set(user.auth).expect(200);
      expect(res.headers['x-ratelimit-limit']).toBe('300');
    });

    it('refuses an unknown tier with invalid_format', async () => {
      const user = await login(url, idp, { sub: 'uid-tier' });
      const res = await request(url)
        .patch(`/v1/operator/users/${user.id}`)
        .set('authorization', `Bearer ${OPERATOR_TOKEN}`)
        .send({ tier: 'platinum' })
        .expect(400);
      expect(res.body).toMatchObject({ type: expect.stringContaining('#invalid_format'), field: 'tier' });
    });

    it('counts the same user across two api instances sharing Redis', async () => {
      const other = await env.startApi();
      const user = await login(url, idp, { sub: 'uid-two-instances' });
      const a = await request(url).get('/v1/me').set(user.auth).expect(200);
      const b = await request(other.url).get('/v1/me').set(user.auth).expect(200);
      expect(Number(b.headers['x-ratelimit-remaining'])).toBe(Number(a.headers['x-ratelimit-remaining']) - 1);
    });
  });

  it('uses Firebase defaults for the identity provider when only a project is configured', () => {
    const config = env.config({ IDP_JWKS_URL: '' });
    expect(config.idp).toMatchObject({ issuer: `https://securetoken.google.com/${IDP_PROJECT}`, audience: IDP_PROJECT });
    expect(config.idp.jwksUrl).toContain('securetoken@system.gserviceaccount.com');
  });
});
