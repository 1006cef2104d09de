import { createHmac, timingSafeEqual } from 'node:crypto';
import { verify as octokitVerify } from '@octokit/webhooks-methods';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { assertTestCaTrusted } from '../support/test-ca';
import { TestEnvironment } from '../support/harness';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, OnboardedDeveloper, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { waitFor } from '../support/wait-for';
import { subscribeWebhook } from '../support/webhook-profiles';
import { ReceivedWebhook, WebhookReceiver } from '../support/webhook-receiver';

/** A receiver written from the spec alone: HMAC-SHA256 over the raw bytes, `sha256=` prefix, constant-time compare. */
function specReceiverAccepts(secret: string, raw: Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = createHmac('sha256', secret).update(raw).digest();
  const given = Buffer.from(header.slice(7), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const standardHeaders = (r: ReceivedWebhook) => ({
  'webhook-id': r.headers['webhook-id'] as string,
  'webhook-timestamp': r.headers['webhook-timestamp'] as string,
  'webhook-signature': r.headers['webhook-signature'] as string,
});

describe('webhooks: signed at-least-once delivery, log, replay, rotation, inbound events', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let runtime: ProviderRuntime;
  let receiver: WebhookReceiver;
  let url: string;
  let dataSource: DataSource;
  let developer: OnboardedDeveloper;
  let auth: { authorization: string };
  let appId: string;
  let secret: string;

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    runtime = await ProviderRuntime.start();
    receiver = await WebhookReceiver.start();
    env = await TestEnvironment.create({
      SMTP_URL: smtp.url,
      WEBHOOK_RETRY_BASE_MS: '1',
      WEBHOOK_SWEEP_INTERVAL_MS: '1000',
      WEBHOOK_DELIVERY_IPS: '203.0.113.0/24, 2001:db8::/32',
    });
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    await env.startWorker();
    developer = await onboardDeveloper(url, smtp, 'hooks@example.com');
    const app = await registerApp(url, developer, { webhook_url: receiver.url });
    appId = app.id;
    auth = { authorization: `Bearer ${await appToken(url, app)}` };
    secret = await subscribeWebhook(url, app, auth, { event_types: ['*'] });
  });
  afterAll(async () => {
    await env?.close();
    await receiver?.close();
    await runtime?.close();
    await smtp?.close();
  });
  afterEach(() => receiver.reset());

  const hook = (path = '') => `/v1/providers/apps/${appId}/webhook${path}`;
  async function sendTest(type = 'install.created') {
    const res = await request(url).post(hook('/test')).set(auth).send({ type }).expect(202);
    return res.body as { id: string; event_id: string; idempotency_key: string };
  }
  async function settled(deliveryId: string, timeoutMs = 15_000) {
    return waitFor(
      async () => {
        const res = await request(url)
          .get(hook(`/deliveries/${deliveryId}`))
          .set(auth)
          .expect(200);
        return res.body.status === 'pending' ? undefined : res.body;
      },
      { what: `delivery ${deliveryId} to settle`, timeoutMs, intervalMs: 50 },
    );
  }
  async function enable() {
    await request(url).put(hook()).set(auth).send({ enabled: true }).expect(200);
  }

  describe('profile', () => {
    it('shows the whsec_ secret on creation only and keeps the target on the app', async () => {
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      const res = await request(url).get(hook()).set(auth).expect(200);
      expect(res.body).toMatchObject({ app_id: appId, url: receiver.url, event_types: ['*'], timeout_seconds: 5, enabled: true });
      expect(res.body.secret).toBeUndefined();
      const updated = await request(url).put(hook()).set(auth).send({ timeout_seconds: 5 }).expect(200);
      expect(updated.body.secret).toBeUndefined();
      const stored: Array<{ secret_encrypted: string }> = await dataSource.query(
        `SELECT secret_encrypted FROM webhook_endpoints WHERE app_id = $1 AND is_primary`,
        [appId],
      );
      expect(stored[0].secret_encrypted).not.toContain(secret.slice(6, 20));
    });

    it('refuses a non-HTTPS url, a timeout over 30 s and unknown event types', async () => {
      await request(url).put(hook()).set(auth).send({ url: 'http://example.com/hooks' }).expect(400);
      await request(url).put(hook()).set(auth).send({ timeout_seconds: 31 }).expect(400);
      await request(url)
        .put(hook())
        .set(auth)
        .send({ event_types: ['soul.deleted'] })
        .expect(400);
    });

    it("answers insufficient_scope for another developer's app", async () => {
      const other = await onboardDeveloper(url, smtp, 'other-hooks@example.com');
      const res = await request(url).get(hook()).set(other.auth).expect(403);
      expect(res.body.type).toContain('insufficient_scope');
    });

    it('publishes the delivery ranges at /.well-known/webhook-ips', async () => {
      const res = await request(url).get('/.well-known/webhook-ips').expect(200);
      expect(res.body).toEqual({ ipv4: ['203.0.113.0/24'], ipv6: ['2001:db8::/32'], updated_at: expect.any(String) });
    });
  });

  describe('signed delivery', () => {
    it('sends a test event whose signatures verify with a spec-only receiver, @octokit/webhooks-methods and standardwebhooks', async () => {
      const delivery = await sendTest('install.created');
      const done = await settled(delivery.id);
      expect(done.status).toBe('delivered');
      const [got] = receiver.of(delivery.event_id);
      expect(got.body).toEqual({
        id: delivery.event_id,
        type: 'install.created',
        created_at: expect.any(String),
        app_id: appId,
        idempotency_key: delivery.idempotency_key,
        data: {
          install_id: expect.any(String),
          user_id: expect.any(String),
          package_id: expect.any(String),
          version: '1.0.0',
          scopes_granted: expect.any(Array),
        },
      });
      expect(specReceiverAccepts(secret, got.raw, got.headers['x-service-signature'])).toBe(true);
      expect(await octokitVerify(secret, got.raw.toString('utf8'), got.headers['x-service-signature'] as string)).toBe(true);
      expect(new Webhook(secret).verify(got.raw.toString('utf8'), standardHeaders(got))).toMatchObject({ id: delivery.event_id });
      expect(got.headers).toMatchObject({
        'x-service-event-id': delivery.event_id,
        'x-service-delivery-attempt': '1',
        'x-service-timestamp': expect.stringMatching(/^\d+$/),
        'user-agent': expect.stringContaining('Service-Webhooks'),
      });
      expect(got.headers['x-service-signature-previous']).toBeUndefined();
      // A tampered body fails every verifier.
      expect(
        specReceiverAccepts(secret, Buffer.from(got.raw.toString().replace('1.0.0', '1.0.1')), got.headers['x-service-signature']),
      ).toBe(false);
    });

    it('fans a real domain event (package.submitted) out to the subscribed app', async () => {
      const pkg = await request(url)
        .post('/v1/providers/packages')
        .set(auth)
        .send({
          appId,
          name: 'Hooked Finance',
          slug: 'hooked-finance',
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
      const got = await waitFor(() => receiver.received.find((r) => r.body.type === 'package.submitted'), {
        what: 'package.submitted delivery',
      });
      expect(got.body).toMatchObject({
        app_id: appId,
        data: { package_id: pkg.body.id, version: '1.0.0', submitted_by: 'hooks@example.com' },
      });
      const [event]: Array<{ id: string }> = await dataSource.query(`SELECT id FROM events WHERE type = 'package.submitted'`);
      expect(got.body.id).toBe(event.id);
      expect(specReceiverAccepts(secret, got.raw, got.headers['x-service-signature'])).toBe(true);
    });
  });

  describe('response table', () => {
    it.each([200, 202, 204])('marks %i as delivered after one attempt', async (status) => {
      receiver.respondWith({ status });
      const done = await settled((await sendTest()).id);
      expect(done).toMatchObject({ status: 'delivered', attempt_count: 1 });
    });

    it.each([400, 401, 403])('fails %i at once, without a retry', async (status) => {
      receiver.respondWith({ status, body: 'nope' });
      const delivery = await sendTest();
      const done = await settled(delivery.id);
      expect(done).toMatchObject({ status: 'failed', attempt_count: 1, last_status_code: status });
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.of(delivery.event_id)).toHaveLength(1);
    });

    it.each([404, 500, 502, 503])('retries %i and delivers on the next 2xx', async (status) => {
      receiver.respondWith({ status });
      const delivery = await sendTest();
      const done = await settled(delivery.id);
      expect(done).toMatchObject({ status: 'delivered', attempt_count: 2 });
      expect(receiver.of(delivery.event_id).map((r) => r.headers['x-service-delivery-attempt'])).toEqual(['1', '2']);
    });

    it.each([301, 302])('does not follow a %i redirect: failure, retried', async (status) => {
      receiver.respondWith({ status, headers: { location: `${receiver.url}/elsewhere` } });
      const delivery = await sendTest();
      const done = await settled(delivery.id);
      expect(done).toMatchObject({ status: 'delivered', attempt_count: 2 });
      expect(receiver.received.some((r) => r.headers['x-service-event-id'] === delivery.event_id && r.raw.length === 0)).toBe(false);
      expect(receiver.of(delivery.event_id)).toHaveLength(2);
    });

    it('retries 429 no sooner than Retry-After', async () => {
      receiver.respondWith({ status: 429, headers: { 'retry-after': '1' } });
      const delivery = await sendTest();
      await settled(delivery.id);
      const [first, second] = receiver.of(delivery.event_id);
      expect(second.at - first.at).toBeGreaterThanOrEqual(950);
    });

    it('retries a timeout (the receiver answers after the profile timeout)', async () => {
      await request(url).put(hook()).set(auth).send({ timeout_seconds: 1 }).expect(200);
      try {
        receiver.respondWith({ status: 200, delayMs: 1_500 });
        const delivery = await sendTest();
        const done = await settled(delivery.id);
        expect(done).toMatchObject({ status: 'delivered', attempt_count: 2 });
        const detail = await request(url)
          .get(hook(`/deliveries/${delivery.id}`))
          .set(auth)
          .expect(200);
        expect(detail.body.attempts[0]).toMatchObject({ outcome: 'retry', error_class: 'timeout', status_code: null });
      } finally {
        await request(url).put(hook()).set(auth).send({ timeout_seconds: 5 }).expect(200);
      }
    });

    it('gives up after 5 retries and logs every attempt with redacted headers, status, latency and body', async () => {
      receiver.fallback = { status: 500, body: 'x'.repeat(6000) };
      const delivery = await sendTest();
      const done = await settled(delivery.id, 20_000);
      expect(done).toMatchObject({ status: 'failed', attempt_count: 6, last_status_code: 500 });
      expect(receiver.of(delivery.event_id)).toHaveLength(6);
      const detail = await request(url)
        .get(hook(`/deliveries/${delivery.id}`))
        .set(auth)
        .expect(200);
      expect(detail.body.attempts).toHaveLength(6);
      const attempt = detail.body.attempts[5];
      expect(attempt).toMatchObject({
        attempt: 6,
        status_code: 500,
        outcome: 'failed',
        error_class: 'http_500',
        latency_ms: expect.any(Number),
      });
      expect(attempt.response_body).toHaveLength(4096);
      expect(attempt.request_headers['X-Service-Signature']).toBe('[redacted]');
      expect(attempt.request_headers['webhook-signature']).toBe('[redacted]');
      expect(JSON.stringify(detail.body)).not.toContain(secret.slice(6));
      const failed = await request(url)
        .get(hook('/deliveries'))
        .query({ status: 'failed', event_type: 'install.created' })
        .set(auth)
        .expect(200);
      expect(failed.body.deliveries.map((d: { id: string }) => d.id)).toContain(delivery.id);
    });

    it('replays a failed delivery with the same event id and idempotency key as a new chain', async () => {
      receiver.respondWith({ status: 400 });
      const delivery = await sendTest();
      await settled(delivery.id);
      const replay = await request(url)
        .post(hook(`/deliveries/${delivery.id}/replay`))
        .set(auth)
        .expect(202);
      expect(replay.body).toMatchObject({ event_id: delivery.event_id, idempotency_key: delivery.idempotency_key, replay_of: delivery.id });
      expect(replay.body.id).not.toBe(delivery.id);
      expect(await settled(replay.body.id)).toMatchObject({ status: 'delivered', attempt_count: 1 });
      const [first, second] = receiver.of(delivery.event_id);
      expect(second.raw.equals(first.raw)).toBe(true);
    });

    it('pages the delivery log with a cursor', async () => {
      const page1 = await request(url).get(hook('/deliveries')).query({ limit: '2' }).set(auth).expect(200);
      expect(page1.body.deliveries).toHaveLength(2);
      const page2 = await request(url).get(hook('/deliveries')).query({ limit: '2', cursor: page1.body.next_cursor }).set(auth).expect(200);
      expect(page2.body.deliveries[0].id).not.toBe(page1.body.deliveries[1].id);
      expect(page2.body.deliveries[0].created_at <= page1.body.deliveries[1].created_at).toBe(true);
    });
  });

  describe('rotation and disabling', () => {
    it('signs with the new secret and, during the grace period, with the previous one in a second header', async () => {
      const rotated = await request(url).post(hook('/secret')).set(auth).expect(200);
      const fresh: string = rotated.body.secret;
      expect(fresh).not.toBe(secret);
      expect(rotated.body.previous_secret_expires_at).toEqual(expect.any(String));
      const delivery = await sendTest('package.published');
      await settled(delivery.id);
      const [got] = receiver.of(delivery.event_id);
      expect(specReceiverAccepts(fresh, got.raw, got.headers['x-service-signature'])).toBe(true);
      expect(specReceiverAccepts(secret, got.raw, got.headers['x-service-signature-previous'])).toBe(true);
      // A receiver still on the old secret, checking both headers, rolls over without a failure.
      expect(await octokitVerify(secret, got.raw.toString(), got.headers['x-service-signature-previous'] as string)).toBe(true);
      expect(() => new Webhook(secret).verify(got.raw.toString(), standardHeaders(got))).not.toThrow();
      expect(() => new Webhook(fresh).verify(got.raw.toString(), standardHeaders(got))).not.toThrow();
      secret = fresh;
    });

    it('disables the endpoint on 410 Gone, notifies, holds deliveries, and recover re-sends them after re-enabling', async () => {
      receiver.respondWith({ status: 410 });
      const gone = await sendTest();
      expect(await settled(gone.id)).toMatchObject({ status: 'failed', attempt_count: 1 });
      const profile = await request(url).get(hook()).set(auth).expect(200);
      expect(profile.body).toMatchObject({ enabled: false, disabled_reason: expect.stringContaining('410') });
      await waitFor(() => smtp.messages.find((m) => m.to.includes('hooks@example.com') && /disabled/i.test(m.subject)), {
        what: 'the disabled-endpoint mail',
      });

      const held = await sendTest();
      expect(await settled(held.id)).toMatchObject({ status: 'failed', attempt_count: 0, last_error: 'endpoint_disabled' });
      expect(receiver.of(held.event_id)).toHaveLength(0);

      await enable();
      const since = new Date(Date.now() - 60_000).toISOString();
      await request(url).post(hook('/recover')).set(auth).send({ since }).expect(202);
      await waitFor(() => receiver.of(held.event_id).length === 1 && receiver.of(gone.event_id).length === 2, {
        what: 'recovered deliveries',
      });
    });
  });

  describe('inbound provider events', () => {
    const inbound = (body: unknown, signature?: string | null, secretOverride?: string) => {
      const raw = typeof body === 'string' ? body : JSON.stringify(body);
      const req = request(url).post('/v1/providers/runtime/webhook').set(auth).set('content-type', 'application/json');
      const header =
        signature === undefined
          ? `sha256=${createHmac('sha256', secretOverride ?? secret)
              .update(raw)
              .digest('hex')}`
          : signature;
      if (header !== null) req.set('X-Signature-256', header);
      return req.send(raw);
    };
    const event = (over: Record<string, unknown> = {}) => ({
      event: 'meeting.updated',
      action: 'moved',
      timestamp: new Date().toISOString(),
      userId: 'usr_someone',
      data: { meetingId: 'mtg_1', startsAt: '2026-02-01T10:00:00Z' },
      ...over,
    });

    it('refuses a missing header, a header without sha256= and a mismatch with 401', async () => {
      for (const signature of [null, 'deadbeef', `sha256=${'0'.repeat(64)}`]) {
        const res = await inbound(event(), signature).expect(401);
        expect(res.body.type).toContain('invalid_signature');
      }
      await inbound(event(), undefined, 'whsec_wrong').expect(401);
    });

    it('checks the signature over the raw bytes, not re-serialised JSON', async () => {
      const raw = JSON.stringify(event(), null, 2);
      await inbound(raw).expect(202);
    });

    it('refuses an unknown type and data that does not match the schema with 400 naming the field', async () => {
      const unknown = await inbound(event({ event: 'meeting.exploded' })).expect(400);
      expect(unknown.body.field).toBe('event');
      const invalid = await inbound(event({ data: { meetingId: 'mtg_2' } })).expect(400);
      expect(invalid.body.field).toMatch(/^data/);
      const old = await inbound(event({ timestamp: new Date(Date.now() - 6 * 60_000).toISOString() })).expect(400);
      expect(old.body.field).toBe('timestamp');
    });

    it('accepts a valid event once and acknowledges a repeat without processing it twice', async () => {
      const body = event({ action: 'renamed' });
      const first = await inbound(body).expect(202);
      expect(first.body).toEqual({ status: 'accepted', event_id: expect.stringMatching(/^evt_/), processed_at: expect.any(String) });
      const again = await inbound(body).expect(202);
      expect(again.body.event_id).toBe(first.body.event_id);
      const rows: unknown[] = await dataSource.query(
        `SELECT id FROM events WHERE type = 'provider_event.received' AND payload->>'event_id' = $1`,
        [first.body.event_id],
      );
      expect(rows).toHaveLength(1);
    });
  });
});
