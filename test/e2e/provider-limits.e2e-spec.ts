import { createHmac, timingSafeEqual } from 'node:crypto';
import request from 'supertest';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, OnboardedDeveloper, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { login } from '../support/users';
import { waitFor } from '../support/wait-for';
import { WebhookReceiver } from '../support/webhook-receiver';

const problem = (code: string) => expect.stringMatching(new RegExp(`#${code}$`));
const operator = { authorization: `Bearer ${OPERATOR_TOKEN}` };

/** A receiver written from the spec alone: HMAC-SHA256 of the raw bytes keyed with webhook_secret, `sha256=` prefix, constant-time compare. */
function verifies(secret: string, raw: Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = createHmac('sha256', secret).update(raw).digest();
  const given = Buffer.from(header.slice(7), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const expectRateHeaders = (res: request.Response) =>
  expect(res.headers).toMatchObject({
    'x-ratelimit-limit': expect.stringMatching(/^\d+$/),
    'x-ratelimit-remaining': expect.stringMatching(/^\d+$/),
    'x-ratelimit-reset': expect.stringMatching(/^\d+$/),
  });

/**
 * Issue 18, webhooks and limits: the spec's webhook set-up (webhook_url on the
 * app) delivers, apps have a provider tier set by the operator, inbound
 * webhook events are limited per tier across instances, and every user API
 * answer carries the X-RateLimit-* headers.
 */
describe('provider tiers, webhook set-up and limits', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let receiver: WebhookReceiver;
  let url: string;
  let other: string;
  let developer: OnboardedDeveloper;

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    receiver = await WebhookReceiver.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env, WEBHOOK_RETRY_BASE_MS: '1' });
    url = (await env.startApi()).url;
    other = (await env.startApi()).url;
    await env.startWorker();
    developer = await onboardDeveloper(url, smtp, 'limits@example.com');
  }, 60_000);

  afterAll(async () => {
    await env?.close();
    await receiver?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  describe('webhook set-up through webhook_url', () => {
    it('gives an app registered with a webhook_url a profile whose webhook_secret verifies the delivery of a real event', async () => {
      const app = await registerApp(url, developer, { name: 'Hooked at birth', webhook_url: receiver.url });
      const secret = (app as unknown as { webhook_secret: string }).webhook_secret;
      expect(secret).toMatch(/^whsec_/);
      const auth = { authorization: `Bearer ${await appToken(url, app)}` };

      // A real domain event: submitting a data_only package version records package.submitted for the app.
      const pkg = await request(url)
        .post('/v1/providers/packages')
        .set(auth)
        .send({
          appId: app.id,
          name: 'Hooked at birth',
          slug: 'hooked-at-birth',
          description: 'Balances',
          riskTier: 'data_only',
          runtimeUrl: runtime.url,
          capabilities: (goodPackageCapabilities() as Array<{ type: string }>).filter((c) => c.type !== 'action'),
        })
        .expect(201);
      await request(url)
        .post(`/v1/providers/packages/manage/${pkg.body.id}/versions/${pkg.body.versions[0].id}/submit`)
        .set(auth)
        .expect(200);
      const got = await waitFor(() => receiver.received.find((r) => r.body.type === 'package.submitted' && r.body.app_id === app.id), {
        what: 'package.submitted delivered to the webhook_url',
      });
      expect(got.body.data).toMatchObject({ package_id: pkg.body.id, version: '1.0.0', submitted_by: 'limits@example.com' });
      expect(verifies(secret, got.raw, got.headers['x-service-signature'])).toBe(true);
      expect(verifies('whsec_someone-else', got.raw, got.headers['x-service-signature'])).toBe(false);
    });

    it('creates the profile when PATCH /v1/providers/runtime/apps/:app_id sets the first webhook_url, and shows its secret once', async () => {
      const app = await registerApp(url, developer, { name: 'Hooked later', webhook_url: undefined });
      expect(app).not.toHaveProperty('webhook_secret');
      const auth = { authorization: `Bearer ${await appToken(url, app)}` };
      await request(url).get(`/v1/providers/apps/${app.id}/webhook`).set(auth).expect(404);

      const set = await request(url)
        .patch(`/v1/providers/runtime/apps/${app.id}`)
        .set(auth)
        .send({ webhook_url: receiver.url })
        .expect(200);
      expect(set.body).toMatchObject({ id: app.id, webhook_url: receiver.url, webhook_secret: expect.stringMatching(/^whsec_/) });
      const again = await request(url)
        .patch(`/v1/providers/runtime/apps/${app.id}`)
        .set(auth)
        .send({ webhook_url: receiver.url })
        .expect(200);
      expect(again.body).not.toHaveProperty('webhook_secret');

      const test = await request(url)
        .post(`/v1/providers/apps/${app.id}/webhook/test`)
        .set(auth)
        .send({ type: 'install.created' })
        .expect(202);
      const got = await waitFor(() => receiver.of(test.body.event_id)[0], { what: 'test event delivery' });
      expect(verifies(set.body.webhook_secret, got.raw, got.headers['x-service-signature'])).toBe(true);
    });

    it("refuses to set the webhook_url of another developer's app, or with a token without apps:write", async () => {
      const app = await registerApp(url, developer, { name: 'Mine', webhook_url: receiver.url });
      const stranger = await onboardDeveloper(url, smtp, 'stranger-limits@example.com');
      const res = await request(url).patch(`/v1/providers/runtime/apps/${app.id}`).set(stranger.auth).send({ webhook_url: receiver.url });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ type: problem('insufficient_scope') });
      const narrow = { authorization: `Bearer ${await appToken(url, app, 'apps:read')}` };
      const scoped = await request(url).patch(`/v1/providers/runtime/apps/${app.id}`).set(narrow).send({ webhook_url: receiver.url });
      expect(scoped.status).toBe(403);
      expect(scoped.body).toMatchObject({ type: problem('insufficient_scope') });
    });
  });

  describe('provider tiers', () => {
    it('lets the operator move an app between Free, Pro and Enterprise, and nobody else', async () => {
      const app = await registerApp(url, developer, { name: 'Tiered', webhook_url: undefined });
      const auth = { authorization: `Bearer ${await appToken(url, app)}` };
      expect((await request(url).get(`/v1/providers/apps/${app.id}`).set(auth).expect(200)).body.tier).toBe('free');

      await request(url).patch(`/v1/operator/apps/${app.id}`).send({ tier: 'pro' }).expect(401);
      await request(url).patch(`/v1/operator/apps/${app.id}`).set(auth).send({ tier: 'pro' }).expect(401);
      await request(url).patch(`/v1/operator/apps/${app.id}`).set(developer.auth).send({ tier: 'pro' }).expect(401);
      const unknownTier = await request(url).patch(`/v1/operator/apps/${app.id}`).set(operator).send({ tier: 'platinum' }).expect(400);
      expect(unknownTier.body).toMatchObject({ type: problem('invalid_format'), field: 'tier' });
      await request(url).patch('/v1/operator/apps/app_unknown').set(operator).send({ tier: 'pro' }).expect(404);
      await request(url)
        .patch(`/v1/operator/apps/${encodeURIComponent("' OR 1=1 --")}`)
        .set(operator)
        .send({ tier: 'pro' })
        .expect(404);

      const moved = await request(url).patch(`/v1/operator/apps/${app.id}`).set(operator).send({ tier: 'enterprise' }).expect(200);
      expect(moved.body).toMatchObject({ id: app.id, tier: 'enterprise' });
      expect(moved.body).not.toHaveProperty('client_secret');
      expect((await request(url).get(`/v1/providers/apps/${app.id}`).set(auth).expect(200)).body.tier).toBe('enterprise');
    });
  });

  describe('webhook events per minute (inbound), by tier, across instances', () => {
    it('refuses the 201st signed event in a minute of a Free app with rate_limit_exceeded, and a Pro app gets 2,000', async () => {
      const app = await registerApp(url, developer, { name: 'Chatty', webhook_url: receiver.url });
      const secret = (app as unknown as { webhook_secret: string }).webhook_secret;
      const auth = { authorization: `Bearer ${await appToken(url, app)}` };
      const raw = JSON.stringify({ event: 'meeting.updated', action: 'moved', timestamp: new Date().toISOString(), userId: 'usr_x' });
      const signature = `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
      const send = (api: string, sig: string | null = signature) => {
        const req = request(api).post('/v1/providers/runtime/webhook').set(auth).set('content-type', 'application/json');
        if (sig) req.set('X-Signature-256', sig);
        return req.send(raw);
      };

      // Unsigned requests are refused before they count.
      for (let i = 0; i < 5; i += 1) await send(url, null).expect(401);
      // Every signed event counts, valid or not (this one lacks `data`: 400), on whichever instance it reaches.
      let last: request.Response | undefined;
      for (let i = 0; i < 200; i += 1) {
        last = await send(i % 2 === 0 ? url : other);
        expect(last.status).toBe(400);
      }
      expect(last!.headers).toMatchObject({ 'x-ratelimit-limit': '200', 'x-ratelimit-remaining': '0' });

      const refused = await send(other).expect(429);
      expect(refused.body).toMatchObject({
        type: problem('rate_limit_exceeded'),
        status: 429,
        title: expect.any(String),
        detail: expect.stringContaining('200 webhook events per minute'),
        instance: '/v1/providers/runtime/webhook',
      });
      expect(refused.headers['content-type']).toContain('application/problem+json');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(refused.headers).toMatchObject({ 'x-ratelimit-limit': '200', 'x-ratelimit-remaining': '0' });
      const reset = Number(refused.headers['x-ratelimit-reset']);
      expect(reset).toBeGreaterThan(Date.now() / 1000);
      expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);

      // Another app has its own budget.
      const quiet = await registerApp(url, developer, { name: 'Quiet', webhook_url: receiver.url });
      const quietAuth = { authorization: `Bearer ${await appToken(url, quiet)}` };
      const quietSecret = (quiet as unknown as { webhook_secret: string }).webhook_secret;
      const quietRes = await request(url)
        .post('/v1/providers/runtime/webhook')
        .set(quietAuth)
        .set('content-type', 'application/json')
        .set('X-Signature-256', `sha256=${createHmac('sha256', quietSecret).update(raw).digest('hex')}`)
        .send(raw);
      expect(quietRes.status).toBe(400);

      // Pro: 2,000 a minute, counting on from what the app used.
      await request(url).patch(`/v1/operator/apps/${app.id}`).set(operator).send({ tier: 'pro' }).expect(200);
      const pro = await send(url);
      expect(pro.status).toBe(400);
      expect(pro.headers['x-ratelimit-limit']).toBe('2000');
      expect(Number(pro.headers['x-ratelimit-remaining'])).toBeLessThan(2000 - 200);
    });
  });

  describe('X-RateLimit-* on every user API answer', () => {
    it('carries the headers on a 200, a 400, a 401 and a 404 for an unknown route', async () => {
      const user = await login(url, idp, { sub: 'uid-limits-headers' });
      const ok = await request(url).get('/v1/me').set(user.auth).expect(200);
      expectRateHeaders(ok);
      expect(ok.headers['x-ratelimit-limit']).toBe('60');

      const bad = await request(url).get('/v1/contacts?limit=many').set(user.auth).expect(400);
      expect(bad.body).toEqual({ error: { code: 'BAD_REQUEST', message: expect.any(String), status: 400 } });
      expectRateHeaders(bad);
      expect(Number(bad.headers['x-ratelimit-remaining'])).toBe(Number(ok.headers['x-ratelimit-remaining']) - 1);

      for (const headers of [{}, { authorization: 'Bearer not-a-token' }]) {
        const unauthorized = await request(url).get('/v1/me').set(headers).expect(401);
        expect(unauthorized.body).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.any(String), status: 401 } });
        expectRateHeaders(unauthorized);
      }

      for (const auth of [user.auth, {}]) {
        const unknown = await request(url).get('/v1/no-such-route').set(auth).expect(404);
        expect(unknown.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String), status: 404 } });
        expectRateHeaders(unknown);
      }
      const unknownMethod = await request(url).put('/v1/me').set(user.auth);
      expect([404, 405]).toContain(unknownMethod.status);
      expectRateHeaders(unknownMethod);
    });
  });
});
