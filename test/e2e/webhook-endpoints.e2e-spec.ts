import { createHmac, timingSafeEqual } from 'node:crypto';
import { verify as octokitVerify } from '@octokit/webhooks-methods';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { TestEnvironment } from '../support/harness';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, OnboardedDeveloper, registerApp, RegisteredApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { waitFor } from '../support/wait-for';
import { ReceivedWebhook, WebhookReceiver } from '../support/webhook-receiver';

/** The spec's check, as a receiver written from the spec alone does it: HMAC-SHA256 of the raw bytes, constant-time. */
function signedWith(secret: string, r: ReceivedWebhook): boolean {
  const header = r.headers['x-service-signature'];
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = createHmac('sha256', secret).update(r.raw).digest();
  const given = Buffer.from(header.slice(7), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const standardHeaders = (r: ReceivedWebhook) => ({
  'webhook-id': r.headers['webhook-id'] as string,
  'webhook-timestamp': r.headers['webhook-timestamp'] as string,
  'webhook-signature': r.headers['webhook-signature'] as string,
});

/** A fixed provider-chosen secret (whsec_ + base64 of 32 bytes). */
const OWN_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

interface EndpointAnswer {
  id: string;
  primary: boolean;
  url: string;
  event_types: string[];
  enabled: boolean;
  secret?: string;
  last_ping: { ok: boolean; status_code: number | null; signature_check: string; delivery_id: string; at: string } | null;
}

describe('webhook endpoints: several per app, each signed with its own secret, checked with a ping', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let runtime: ProviderRuntime;
  let receiver: WebhookReceiver;
  let url: string;
  let dataSource: DataSource;
  let developer: OnboardedDeveloper;
  let app: RegisteredApp;
  let auth: { authorization: string };

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    runtime = await ProviderRuntime.start();
    receiver = await WebhookReceiver.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, WEBHOOK_RETRY_BASE_MS: '1' });
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    await env.startWorker();
    developer = await onboardDeveloper(url, smtp, 'endpoints@example.com');
    app = await registerApp(url, developer, { webhook_url: `${receiver.url}/primary` });
    auth = { authorization: `Bearer ${await appToken(url, app)}` };
  });
  afterAll(async () => {
    await env?.close();
    await receiver?.close();
    await runtime?.close();
    await smtp?.close();
  });
  afterEach(() => receiver.reset());

  const endpoints = (appId = app.id, path = '') => `/v1/providers/apps/${appId}/webhook/endpoints${path}`;
  const at = (path: string) => receiver.received.filter((r) => r.path === `/hooks${path}`);
  async function create(body: Record<string, unknown>, headers = auth, appId = app.id): Promise<EndpointAnswer> {
    const res = await request(url).post(endpoints(appId)).set(headers).send(body).expect(201);
    return res.body as EndpointAnswer;
  }
  /** Answers 401 unless the spec signature verifies with one of `secrets()`: a receiver that checks signatures. */
  function verifying(path: string, secrets: () => string[]) {
    receiver.decide = (r) => (r.path === `/hooks${path}` && !secrets().some((s) => signedWith(s, r)) ? { status: 401 } : undefined);
  }

  describe('CRUD', () => {
    it('lists the spec profile as the primary endpoint, with the limit', async () => {
      const res = await request(url).get(endpoints()).set(auth).expect(200);
      expect(res.body.limit).toBe(16);
      expect(res.body.endpoints).toEqual([
        expect.objectContaining({ id: expect.stringMatching(/^whe_/), primary: true, url: `${receiver.url}/primary`, event_types: ['*'] }),
      ]);
      expect(res.body.endpoints[0].secret).toBeUndefined();
      const profile = await request(url).get(`/v1/providers/apps/${app.id}/webhook`).set(auth).expect(200);
      expect(profile.body).toMatchObject({ app_id: app.id, url: `${receiver.url}/primary`, event_types: ['*'] });
    });

    it('creates an endpoint with its own secret shown once, reads, edits and deletes it', async () => {
      const created = await create({
        url: `${receiver.url}/crud`,
        description: '  Billing sync  ',
        event_types: ['install.removed', 'install.created', 'install.created'],
        timeout_seconds: 3,
      });
      expect(created).toMatchObject({
        id: expect.stringMatching(/^whe_[0-9A-Za-z]{22}$/),
        primary: false,
        url: `${receiver.url}/crud`,
        description: 'Billing sync',
        event_types: ['install.created', 'install.removed'],
        timeout_seconds: 3,
        enabled: true,
        secret: expect.stringMatching(/^whsec_/),
      });
      const profile = await request(url).get(`/v1/providers/apps/${app.id}/webhook`).set(auth).expect(200);
      expect(created.secret).not.toBe(profile.body.secret);

      const read = await request(url)
        .get(endpoints(app.id, `/${created.id}`))
        .set(auth)
        .expect(200);
      expect(read.body.secret).toBeUndefined();
      expect(read.body.last_ping).toEqual(created.last_ping);

      const edited = await request(url)
        .patch(endpoints(app.id, `/${created.id}`))
        .set(auth)
        .send({ description: 'Billing', event_types: ['*'], timeout_seconds: 10, enabled: false })
        .expect(200);
      expect(edited.body).toMatchObject({ description: 'Billing', event_types: ['*'], timeout_seconds: 10, enabled: false });
      expect(edited.body.disabled_reason).toBe('disabled by the provider');

      await request(url)
        .delete(endpoints(app.id, `/${created.id}`))
        .set(auth)
        .expect(204);
      await request(url)
        .get(endpoints(app.id, `/${created.id}`))
        .set(auth)
        .expect(404);
      const list = await request(url).get(endpoints()).set(auth).expect(200);
      expect(list.body.endpoints.map((e: EndpointAnswer) => e.id)).not.toContain(created.id);
    });

    it('keeps the primary endpoint: DELETE answers 409, and its URL edited here is the app webhook_url', async () => {
      const list = await request(url).get(endpoints()).set(auth).expect(200);
      const primary = list.body.endpoints[0] as EndpointAnswer;
      const refused = await request(url)
        .delete(endpoints(app.id, `/${primary.id}`))
        .set(auth)
        .expect(409);
      expect(refused.body.type).toContain('conflict');

      const moved = await request(url)
        .patch(endpoints(app.id, `/${primary.id}`))
        .set(auth)
        .send({ url: `${receiver.url}/primary-moved` })
        .expect(200);
      expect(moved.body.url).toBe(`${receiver.url}/primary-moved`);
      expect(moved.body.last_ping).toMatchObject({ ok: true });
      const appNow = await request(url).get(`/v1/providers/apps/${app.id}`).set(auth).expect(200);
      expect(appNow.body.webhook_url).toBe(`${receiver.url}/primary-moved`);
      await request(url)
        .patch(endpoints(app.id, `/${primary.id}`))
        .set(auth)
        .send({ url: `${receiver.url}/primary` })
        .expect(200);
    });

    it('refuses hostile input with problem details naming the field', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{}, 'url'],
        [{ url: 'http://example.com/hooks' }, 'url'],
        [{ url: 'not a url' }, 'url'],
        [{ url: `${receiver.url}/x`, event_types: ['ping'] }, 'event_types'],
        [{ url: `${receiver.url}/x`, event_types: ['soul.deleted'] }, 'event_types'],
        [{ url: `${receiver.url}/x`, event_types: [] }, 'event_types'],
        [{ url: `${receiver.url}/x`, timeout_seconds: 31 }, 'timeout_seconds'],
        [{ url: `${receiver.url}/x`, description: 'd'.repeat(201) }, 'description'],
        [{ url: `${receiver.url}/x`, secret: 'whsec_short' }, 'secret'],
        [{ url: `${receiver.url}/x`, url_extra: true }, 'url_extra'],
      ];
      for (const [body, field] of cases) {
        const res = await request(url).post(endpoints()).set(auth).send(body);
        expect({ body, status: res.status, type: res.headers['content-type'] }).toEqual({
          body,
          status: 400,
          type: expect.stringContaining('application/problem+json'),
        });
        expect(res.body.field ?? JSON.stringify(res.body)).toContain(field);
      }
      await request(url).get(endpoints(app.id, '/whe_nonsense')).set(auth).expect(404);
      await request(url)
        .post(endpoints(app.id, '/whe_0123456789ABCDEFabcdef/test'))
        .set(auth)
        .send({ type: 'install.created' })
        .expect(404);
      const list = await request(url).get(endpoints()).set(auth).expect(200);
      const primary = list.body.endpoints[0] as EndpointAnswer;
      await request(url)
        .post(endpoints(app.id, `/${primary.id}/test`))
        .set(auth)
        .send({ type: 'ping' })
        .expect(400);
    });
  });

  describe('the spec profile as the primary endpoint', () => {
    it('creates one primary endpoint from 10 concurrent PUTs, shows its secret once, and answers each change as made', async () => {
      const bare = await registerApp(url, developer, { webhook_url: undefined });
      expect(bare.webhook_secret).toBeUndefined();
      const bareAuth = { authorization: `Bearer ${await appToken(url, bare)}` };
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          request(url)
            .put(`/v1/providers/apps/${bare.id}/webhook`)
            .set(bareAuth)
            .send({ url: `${receiver.url}/bare`, timeout_seconds: 7 }),
        ),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
      expect(answers.filter((a) => a.body.secret)).toHaveLength(1);
      expect(answers.every((a) => a.body.timeout_seconds === 7)).toBe(true);
      const list = await request(url).get(endpoints(bare.id)).set(bareAuth).expect(200);
      expect(list.body.endpoints).toEqual([expect.objectContaining({ primary: true, url: `${receiver.url}/bare`, timeout_seconds: 7 })]);
      // The spec's routes send no ping.
      expect(at('/bare')).toHaveLength(0);
      const changed = await request(url)
        .put(`/v1/providers/apps/${bare.id}/webhook`)
        .set(bareAuth)
        .send({ event_types: ['install.created'], enabled: false })
        .expect(200);
      expect(changed.body).toMatchObject({ event_types: ['install.created'], enabled: false, timeout_seconds: 7 });

      // An app registered with a webhook_url before profiles came with it (issue 18) has none: PUT creates it, once.
      await dataSource.query(`DELETE FROM webhook_endpoints WHERE app_id = $1`, [bare.id]);
      const legacy = await Promise.all(
        Array.from({ length: 10 }, () =>
          request(url).put(`/v1/providers/apps/${bare.id}/webhook`).set(bareAuth).send({ timeout_seconds: 9 }),
        ),
      );
      expect(legacy.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
      expect(legacy.filter((a) => a.body.secret)).toHaveLength(1);
      expect(legacy.every((a) => a.body.timeout_seconds === 9)).toBe(true);
    });
  });

  describe('isolation', () => {
    it("answers 403 for another developer's app, 404 for another app's endpoint, and 403 for a token without the scope", async () => {
      const mine = await create({ url: `${receiver.url}/mine`, enabled: false });
      const other = await onboardDeveloper(url, smtp, 'other-endpoints@example.com');
      const otherApp = await registerApp(url, other, { webhook_url: `${receiver.url}/other` });
      const otherAuth = { authorization: `Bearer ${await appToken(url, otherApp)}` };

      for (const headers of [other.auth, otherAuth]) {
        const listed = await request(url).get(endpoints()).set(headers).expect(403);
        expect(listed.body.type).toContain('insufficient_scope');
        await request(url)
          .get(endpoints(app.id, `/${mine.id}`))
          .set(headers)
          .expect(403);
        await request(url)
          .patch(endpoints(app.id, `/${mine.id}`))
          .set(headers)
          .send({ description: 'taken' })
          .expect(403);
        await request(url)
          .delete(endpoints(app.id, `/${mine.id}`))
          .set(headers)
          .expect(403);
      }
      // My endpoint id under the other app (theirs to act on): not found there.
      for (const path of [`/${mine.id}`, `/${mine.id}/deliveries`, `/${mine.id}/secret`]) {
        const method = path.endsWith('secret') ? 'post' : 'get';
        const res = await request(url)[method](endpoints(otherApp.id, path)).set(otherAuth).expect(404);
        expect(res.body.type).toContain('not_found');
      }
      await request(url)
        .delete(endpoints(otherApp.id, `/${mine.id}`))
        .set(otherAuth)
        .expect(404);

      const readOnly = { authorization: `Bearer ${await appToken(url, app, 'webhooks:read')}` };
      await request(url).get(endpoints()).set(readOnly).expect(200);
      const refused = await request(url)
        .post(endpoints())
        .set(readOnly)
        .send({ url: `${receiver.url}/ro` })
        .expect(403);
      expect(refused.body.type).toContain('insufficient_scope');
      await request(url)
        .post(endpoints(app.id, `/${mine.id}/secret`))
        .set(readOnly)
        .expect(403);
      await request(url).get(endpoints()).expect(401);

      const still = await request(url)
        .get(endpoints(app.id, `/${mine.id}`))
        .set(auth)
        .expect(200);
      expect(still.body.description).toBe('');
    });
  });

  describe('limit', () => {
    it('never makes a 17th endpoint, even from 30 concurrent creates', async () => {
      const fresh = await registerApp(url, developer, { webhook_url: `${receiver.url}/limit-primary` });
      const freshAuth = { authorization: `Bearer ${await appToken(url, fresh)}` };
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          request(url)
            .post(endpoints(fresh.id))
            .set(freshAuth)
            .send({ url: `${receiver.url}/limit-${i}` }),
        ),
      );
      const statuses = answers.map((a) => a.status).sort();
      // The primary endpoint counts: 15 more fit.
      expect(statuses.filter((s) => s === 201)).toHaveLength(15);
      expect(statuses.filter((s) => s === 409)).toHaveLength(15);
      const refused = answers.find((a) => a.status === 409)!;
      expect(refused.body).toMatchObject({ limit: 16, type: expect.stringContaining('conflict') });
      const [{ n }]: Array<{ n: number }> = await dataSource.query(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE app_id = $1`, [
        fresh.id,
      ]);
      expect(n).toBe(16);
    });
  });

  describe('endpoint check (ping)', () => {
    it('tells a receiver that verifies signatures from one that does not', async () => {
      verifying('/verifies', () => [OWN_SECRET]);
      const verified = await create({ url: `${receiver.url}/verifies`, secret: OWN_SECRET });
      expect(verified.secret).toBeUndefined();
      expect(verified.last_ping).toMatchObject({ ok: true, status_code: 200, signature_check: 'verified', error: null });
      // The signed ping and the probe signed with a secret the receiver cannot know.
      const [ping, probe] = at('/verifies');
      expect(ping.body).toMatchObject({ type: 'ping', app_id: app.id, data: { endpoint_id: verified.id } });
      expect(new Webhook(OWN_SECRET).verify(ping.raw.toString('utf8'), standardHeaders(ping))).toMatchObject({ type: 'ping' });
      expect(await octokitVerify(OWN_SECRET, ping.raw.toString('utf8'), ping.headers['x-service-signature'] as string)).toBe(true);
      expect(signedWith(OWN_SECRET, probe)).toBe(false);

      const lax = await create({ url: `${receiver.url}/accepts-anything` });
      expect(lax.last_ping).toMatchObject({ ok: true, status_code: 200, signature_check: 'not_verified' });
    });

    it('reports a receiver that does not know the generated secret yet, and verifies once it does', async () => {
      let known: string[] = [];
      verifying('/learns', () => known);
      const created = await create({ url: `${receiver.url}/learns` });
      expect(created.last_ping).toMatchObject({ ok: false, status_code: 401, error: 'http_401', signature_check: 'unknown' });
      known = [created.secret!];
      const again = await request(url)
        .post(endpoints(app.id, `/${created.id}/ping`))
        .set(auth)
        .expect(200);
      expect(again.body.last_ping).toMatchObject({ ok: true, signature_check: 'verified' });
      // Both pings are in the endpoint's delivery log as test deliveries, with their attempt.
      const log = await request(url)
        .get(endpoints(app.id, `/${created.id}/deliveries`))
        .set(auth)
        .expect(200);
      expect(
        log.body.deliveries.map((d: { event_type: string; status: string; test: boolean }) => [d.event_type, d.status, d.test]),
      ).toEqual([
        ['ping', 'delivered', true],
        ['ping', 'failed', true],
      ]);
      const detail = await request(url)
        .get(endpoints(app.id, `/${created.id}/deliveries/${again.body.last_ping.delivery_id}`))
        .set(auth)
        .expect(200);
      expect(detail.body.attempts).toEqual([expect.objectContaining({ attempt: 1, status_code: 200, outcome: 'delivered' })]);
      expect(detail.body.attempts[0].request_headers['webhook-signature']).toBe('[redacted]');
    });

    it('pings a new URL, and sends nothing to an endpoint created paused', async () => {
      const paused = await create({ url: `${receiver.url}/paused`, enabled: false });
      expect(paused.last_ping).toBeNull();
      expect(at('/paused')).toHaveLength(0);
      const moved = await request(url)
        .patch(endpoints(app.id, `/${paused.id}`))
        .set(auth)
        .send({ enabled: true, url: `${receiver.url}/paused-moved` })
        .expect(200);
      expect(moved.body.last_ping).toMatchObject({ ok: true });
      expect(at('/paused-moved').map((r) => r.body.type)).toEqual(['ping', 'ping']);
      // The same URL again is no change: no ping.
      await request(url)
        .patch(endpoints(app.id, `/${paused.id}`))
        .set(auth)
        .send({ url: `${receiver.url}/paused-moved` })
        .expect(200);
      expect(at('/paused-moved')).toHaveLength(2);
    });

    it('reports a receiver that is down', async () => {
      receiver.decide = (r) => (r.path === '/hooks/down' ? { status: 503 } : undefined);
      const down = await create({ url: `${receiver.url}/down` });
      expect(down.last_ping).toMatchObject({ ok: false, status_code: 503, error: 'http_503', signature_check: 'unknown' });
      expect(at('/down')).toHaveLength(1);
    });
  });

  describe('fan-out to several endpoints', () => {
    it('delivers one event to every subscribed endpoint, each signed with its own secret, and nothing to the others', async () => {
      const fresh = await registerApp(url, developer, { webhook_url: `${receiver.url}/fan-primary` });
      const freshAuth = { authorization: `Bearer ${await appToken(url, fresh)}` };
      const primarySecret = fresh.webhook_secret!;
      const second = await create({ url: `${receiver.url}/fan-second`, event_types: ['package.submitted'] }, freshAuth, fresh.id);
      const filtered = await create({ url: `${receiver.url}/fan-filtered`, event_types: ['install.created'] }, freshAuth, fresh.id);
      const disabled = await create({ url: `${receiver.url}/fan-disabled`, enabled: false }, freshAuth, fresh.id);
      expect(second.secret).not.toBe(primarySecret);

      const pkg = await request(url)
        .post('/v1/providers/packages')
        .set(freshAuth)
        .send({
          appId: fresh.id,
          name: 'Endpoint Finance',
          slug: 'endpoint-finance',
          description: 'Balances',
          riskTier: 'data_only',
          runtimeUrl: runtime.url,
          capabilities: (goodPackageCapabilities() as Array<{ type: string }>).filter((c) => c.type !== 'action'),
        })
        .expect(201);
      await request(url)
        .post(`/v1/providers/packages/manage/${pkg.body.id}/versions/${pkg.body.versions[0].id}/submit`)
        .set(freshAuth)
        .expect(200);
      const isSubmitted = (r: ReceivedWebhook) => r.body.type === 'package.submitted';
      const [toPrimary, toSecond] = await waitFor(
        () => {
          const a = at('/fan-primary').find(isSubmitted);
          const b = at('/fan-second').find(isSubmitted);
          return a && b ? [a, b] : undefined;
        },
        { what: 'package.submitted at both endpoints' },
      );

      // One event, the same bytes, two signatures: each verifies with its endpoint's secret only.
      expect(toPrimary.body.id).toBe(toSecond.body.id);
      expect(toPrimary.raw.equals(toSecond.raw)).toBe(true);
      expect(toPrimary.headers['webhook-signature']).not.toBe(toSecond.headers['webhook-signature']);
      for (const [got, own, other] of [
        [toPrimary, primarySecret, second.secret!],
        [toSecond, second.secret!, primarySecret],
      ] as const) {
        const body = got.raw.toString('utf8');
        expect(new Webhook(own).verify(body, standardHeaders(got))).toMatchObject({ id: got.body.id, type: 'package.submitted' });
        expect(() => new Webhook(other).verify(body, standardHeaders(got))).toThrow();
        expect(await octokitVerify(own, body, got.headers['x-service-signature'] as string)).toBe(true);
        expect(await octokitVerify(other, body, got.headers['x-service-signature'] as string)).toBe(false);
      }

      // The event-type filter and the disabled endpoint: nothing sent; the disabled one logs it as held.
      const eventId = toPrimary.body.id as string;
      const rows: Array<{ endpoint_id: string; status: string; last_error: string | null }> = await dataSource.query(
        `SELECT endpoint_id, status, last_error FROM webhook_deliveries WHERE event_id = $1 ORDER BY endpoint_id`,
        [eventId],
      );
      expect(rows.map((r) => r.endpoint_id)).not.toContain(filtered.id);
      expect(rows.find((r) => r.endpoint_id === disabled.id)).toMatchObject({ status: 'failed', last_error: 'endpoint_disabled' });
      expect(at('/fan-filtered').filter(isSubmitted)).toHaveLength(0);
      expect(at('/fan-disabled')).toHaveLength(0);

      // Each endpoint's log holds its own delivery; the profile's log is the primary endpoint's.
      const secondLog = await request(url)
        .get(endpoints(fresh.id, `/${second.id}/deliveries`))
        .set(freshAuth)
        .expect(200);
      const secondDelivery = secondLog.body.deliveries.find((d: { event_id: string }) => d.event_id === eventId);
      expect(secondDelivery).toMatchObject({ endpoint_id: second.id, status: 'delivered' });
      const profileLog = await request(url).get(`/v1/providers/apps/${fresh.id}/webhook/deliveries`).set(freshAuth).expect(200);
      expect(profileLog.body.deliveries.every((d: { endpoint_id: string }) => d.endpoint_id !== second.id)).toBe(true);
      await request(url)
        .get(endpoints(fresh.id, `/${filtered.id}/deliveries/${secondDelivery.id}`))
        .set(freshAuth)
        .expect(404);

      // Recover re-sends the held event once the endpoint is enabled again.
      await request(url)
        .patch(endpoints(fresh.id, `/${disabled.id}`))
        .set(freshAuth)
        .send({ enabled: true })
        .expect(200);
      await request(url)
        .post(endpoints(fresh.id, `/${disabled.id}/recover`))
        .set(freshAuth)
        .send({ since: new Date(Date.now() - 60_000).toISOString() })
        .expect(202);
      const recovered = await waitFor(() => at('/fan-disabled').find((r) => r.body.id === eventId), { what: 'the recovered event' });
      expect(new Webhook(disabled.secret!).verify(recovered.raw.toString('utf8'), standardHeaders(recovered))).toMatchObject({
        id: eventId,
      });

      // Replay through the endpoint route goes to that endpoint again.
      const replay = await request(url)
        .post(endpoints(fresh.id, `/${second.id}/deliveries/${secondDelivery.id}/replay`))
        .set(freshAuth)
        .expect(202);
      expect(replay.body).toMatchObject({ endpoint_id: second.id, event_id: eventId, replay_of: secondDelivery.id });
      await waitFor(() => at('/fan-second').filter((r) => r.body.id === eventId).length === 2, { what: 'the replay' });
    });
  });

  describe('rotation', () => {
    it("signs with an endpoint's new and previous secrets during its grace period, leaving the other endpoints alone", async () => {
      const endpoint = await create({ url: `${receiver.url}/rotating` });
      const rotated = await request(url)
        .post(endpoints(app.id, `/${endpoint.id}/secret`))
        .set(auth)
        .expect(200);
      const fresh = rotated.body.secret as string;
      expect(fresh).toMatch(/^whsec_/);
      expect(fresh).not.toBe(endpoint.secret);
      expect(rotated.body.previous_secret_expires_at).toEqual(expect.any(String));

      const sent = await request(url)
        .post(endpoints(app.id, `/${endpoint.id}/test`))
        .set(auth)
        .send({ type: 'install.created' })
        .expect(202);
      expect(sent.body.endpoint_id).toBe(endpoint.id);
      const got = await waitFor(() => at('/rotating').find((r) => r.body.id === sent.body.event_id), { what: 'the test event' });
      const body = got.raw.toString('utf8');
      expect(new Webhook(fresh).verify(body, standardHeaders(got))).toMatchObject({ id: sent.body.event_id });
      expect(new Webhook(endpoint.secret!).verify(body, standardHeaders(got))).toMatchObject({ id: sent.body.event_id });
      expect(signedWith(fresh, got)).toBe(true);
      expect(await octokitVerify(endpoint.secret!, body, got.headers['x-service-signature-previous'] as string)).toBe(true);

      // The primary endpoint was not rotated: its deliveries carry one signature.
      const primaryTest = await request(url)
        .post(`/v1/providers/apps/${app.id}/webhook/test`)
        .set(auth)
        .send({ type: 'install.created' })
        .expect(202);
      const toPrimary = await waitFor(() => at('/primary').find((r) => r.body.id === primaryTest.body.event_id), {
        what: 'the primary test event',
      });
      expect(toPrimary.headers['x-service-signature-previous']).toBeUndefined();
      expect(signedWith(app.webhook_secret!, toPrimary)).toBe(true);
      expect(signedWith(fresh, toPrimary)).toBe(false);
    });
  });
});
