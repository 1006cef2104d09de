import { createHmac } from 'node:crypto';
import { connect } from 'node:net';
import request from 'supertest';
import { HttpDrain } from '../../src/common/http/http-drain';
import { expectCleanError } from '../faults/envelopes';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, DEVELOPER_PASSWORD, onboardDeveloper, publishPackage, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { login, LoggedInUser } from '../support/users';
import { subscribeWebhook } from '../support/webhook-profiles';

/** A lone UTF-16 high surrogate: JSON.stringify writes it as the escape `\ud800`, which JSON.parse turns back into one. */
const LONE = 'a\ud800b';
const REQUEST_ID = /^req_[0-9A-Za-z]{8,64}$/;

/**
 * Issue 22, "Hostile input never reaches a 500": each case is the request that answered 500 (or a
 * framework answer outside both envelopes) on main, asserting the status, the path's envelope and the request id.
 */
describe('hostile input never reaches a 500', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let user: LoggedInUser;
  let contactId: string;
  let devAuth: Record<string, string>;
  let appAuth: { authorization: string };
  let appId: string;
  let packageId: string;
  let webhookSecret: string;

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
    ({ url } = await env.startApi());
    await env.startWorker();
    user = await login(url, idp, { sub: 'uid-hostile', name: 'Hostile', email: 'hostile@example.com' });
    contactId = (await request(url).post('/v1/contacts').set(user.auth).send({ name: 'Target', email: 'target@example.com' }).expect(201))
      .body.id;
    const developer = await onboardDeveloper(url, smtp, 'hostile-dev@example.com');
    devAuth = developer.auth;
    const app = await registerApp(url, developer);
    appId = app.id;
    appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    webhookSecret = await subscribeWebhook(url, app, appAuth, { event_types: ['*'] });
    ({ packageId } = await publishPackage(url, appAuth, {
      appId,
      name: 'Hostile Finance',
      slug: 'hostile-finance',
      description: 'Balances',
      riskTier: 'data_only',
      runtimeUrl: runtime.url,
      capabilities: (goodPackageCapabilities() as Array<{ type: string }>).filter((c) => c.type !== 'action'),
    }));
  }, 90_000);

  afterAll(async () => {
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  const operator = { authorization: `Bearer ${OPERATOR_TOKEN}` };

  function expectRefused(res: request.Response, path: string, options: { status: number; code?: string; field?: string }): void {
    expectCleanError(res, path, { status: options.status, code: options.code, allow5xx: [503] });
    expect(res.headers['x-service-request-id']).toMatch(REQUEST_ID);
    // Every API answer reports the limit its caller is under, also one given before any limiter ran.
    expect(res.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
    expect(res.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    if (options.field === undefined) return;
    if (path.startsWith('/v1/providers') || path.startsWith('/v1/operator')) expect(res.body.field).toBe(options.field);
    else expect(res.body.error.message).toContain(options.field);
  }

  /** A validly signed inbound provider event (the app's webhook secret over the exact bytes sent). */
  function inbound(over: Record<string, unknown>) {
    const raw = JSON.stringify({
      event: 'meeting.updated',
      action: 'moved',
      timestamp: new Date().toISOString(),
      userId: 'usr_someone',
      data: { meetingId: 'mtg_1', startsAt: '2026-02-01T10:00:00Z' },
      ...over,
    });
    const signature = `sha256=${createHmac('sha256', webhookSecret).update(raw).digest('hex')}`;
    return request(url)
      .post('/v1/providers/runtime/webhook')
      .set(appAuth)
      .set('content-type', 'application/json')
      .set('X-Signature-256', signature)
      .send(raw);
  }

  describe('ill-formed Unicode is refused once, at the edge, naming the field', () => {
    it('refuses a lone surrogate in the email of POST /v1/providers/account with invalid_format', async () => {
      const res = await request(url)
        .post('/v1/providers/account')
        .send({ company_name: 'Acme', email: `${LONE}@example.com`, password: DEVELOPER_PASSWORD });
      expectRefused(res, '/v1/providers/account', { status: 400, code: 'invalid_format', field: 'email' });
    });

    it('refuses a lone surrogate in the email of POST /v1/providers/auth/login', async () => {
      const res = await request(url)
        .post('/v1/providers/auth/login')
        .send({ email: `${LONE}@example.com`, password: DEVELOPER_PASSWORD });
      expectRefused(res, '/v1/providers/auth/login', { status: 400, code: 'invalid_format', field: 'email' });
    });

    it('refuses a lone surrogate in the email of POST /v1/contacts with BAD_REQUEST', async () => {
      const res = await request(url)
        .post('/v1/contacts')
        .set(user.auth)
        .send({ name: 'Ada', email: `${LONE}@example.com` });
      expectRefused(res, '/v1/contacts', { status: 400, code: 'BAD_REQUEST', field: 'email' });
    });

    it('refuses a lone surrogate in the email of PATCH /v1/contacts/{id}', async () => {
      const path = `/v1/contacts/${contactId}`;
      const res = await request(url)
        .patch(path)
        .set(user.auth)
        .send({ email: `${LONE}@example.com` });
      expectRefused(res, path, { status: 400, code: 'BAD_REQUEST', field: 'email' });
    });

    it('refuses a lone surrogate in the content of POST /v1/messages', async () => {
      const res = await request(url).post('/v1/messages').set(user.auth).send({ recipient_id: contactId, content: LONE });
      expectRefused(res, '/v1/messages', { status: 400, code: 'BAD_REQUEST', field: 'content' });
    });

    it('refuses a lone surrogate in the message of the operator suspension', async () => {
      const path = `/v1/operator/packages/${packageId}/suspend`;
      const res = await request(url).post(path).set(operator).send({ reason: 'policy_violation', message: LONE, remediation: 'Fix it' });
      expectRefused(res, path, { status: 400, code: 'invalid_format', field: 'message' });
    });

    it('refuses a lone surrogate in the action and the userId of a validly signed inbound webhook', async () => {
      expectRefused(await inbound({ action: LONE }), '/v1/providers/runtime/webhook', {
        status: 400,
        code: 'invalid_format',
        field: 'action',
      });
      expectRefused(await inbound({ userId: LONE }), '/v1/providers/runtime/webhook', {
        status: 400,
        code: 'invalid_format',
        field: 'userId',
      });
    });

    it('refuses NUL in a body field, deep in a nested body and in a query parameter', async () => {
      expectRefused(await request(url).post('/v1/contacts').set(user.auth).send({ name: 'a\u0000b' }), '/v1/contacts', {
        status: 400,
        code: 'BAD_REQUEST',
        field: 'name',
      });
      const soul = await request(url)
        .patch('/v1/soul')
        .set(user.auth)
        .send({ values: ['kind', 'x\u0000'] });
      expectRefused(soul, '/v1/soul', { status: 400, code: 'BAD_REQUEST', field: 'values[1]' });
      const query = await request(url).get('/v1/marketplace/packages?q=a%00b').set(user.auth);
      expectRefused(query, '/v1/marketplace/packages', { status: 400, code: 'BAD_REQUEST', field: 'q' });
    });

    it('still stores well-formed text outside the BMP (a surrogate pair) verbatim', async () => {
      const created = await request(url).post('/v1/contacts').set(user.auth).send({ name: 'Ada 𝔘 🧨' }).expect(201);
      expect(created.body.name).toBe('Ada 𝔘 🧨');
    });
  });

  describe('null is refused for every field that does not give it a meaning', () => {
    it('refuses "event_types": null on PUT /v1/providers/apps/{app_id}/webhook with invalid_format', async () => {
      const path = `/v1/providers/apps/${appId}/webhook`;
      const res = await request(url).put(path).set(appAuth).send({ event_types: null });
      expectRefused(res, path, { status: 400, code: 'invalid_format', field: 'event_types' });
    });

    it('refuses "scopes": null on POST /v1/installs', async () => {
      const res = await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId, scopes: null });
      expectRefused(res, '/v1/installs', { status: 400, code: 'BAD_REQUEST', field: 'scopes' });
    });

    it('refuses null for an optional field of a create body and of another PATCH body', async () => {
      expectRefused(await request(url).post('/v1/groups').set(user.auth).send({ name: 'Club', member_ids: null }), '/v1/groups', {
        status: 400,
        code: 'BAD_REQUEST',
        field: 'member_ids',
      });
      const path = `/v1/providers/apps/${appId}`;
      expectRefused(await request(url).patch(path).set(devAuth).send({ webhook_url: null }), path, {
        status: 400,
        code: 'invalid_format',
        field: 'webhook_url',
      });
    });

    it('keeps "email": null on PATCH /v1/contacts/{id}, where null means remove the address', async () => {
      const res = await request(url).patch(`/v1/contacts/${contactId}`).set(user.auth).send({ email: null }).expect(200);
      expect(res.body.email).toBeNull();
    });
  });

  describe('every numeric query parameter is bounded', () => {
    it('refuses a 40-digit offset on GET /v1/marketplace/packages with BAD_REQUEST and the rate-limit headers', async () => {
      const res = await request(url)
        .get(`/v1/marketplace/packages?offset=${'9'.repeat(40)}`)
        .set(user.auth);
      expectRefused(res, '/v1/marketplace/packages', { status: 400, code: 'BAD_REQUEST', field: 'offset' });
      expect(res.headers['x-ratelimit-limit']).toEqual(expect.any(String));
    });

    it('refuses a 40-digit, fractional or negative limit on the delivery log instead of clamping it', async () => {
      const path = `/v1/providers/apps/${appId}/webhook/deliveries`;
      for (const limit of ['9'.repeat(40), '1.5', '-3', '1e3']) {
        const res = await request(url).get(path).query({ limit }).set(appAuth);
        expectRefused(res, path, { status: 400, code: 'invalid_format', field: 'limit' });
      }
    });

    it('refuses a 40-digit limit on the contact, group, message and conformance lists', async () => {
      const huge = '9'.repeat(40);
      for (const path of ['/v1/contacts', '/v1/groups', `/v1/messages?with=${contactId}&`]) {
        const res = await request(url)
          .get(`${path}${path.endsWith('&') ? '' : '?'}limit=${huge}`)
          .set(user.auth);
        expectRefused(res, path.split('?')[0], { status: 400, code: 'BAD_REQUEST', field: 'limit' });
      }
      const conformance = await request(url).get(`/v1/providers/conformance?version_id=ver_x&limit=${huge}`).set(appAuth);
      expectRefused(conformance, '/v1/providers/conformance', { status: 400, code: 'invalid_format', field: 'limit' });
    });
  });

  describe('answers the framework produces on its own are in the path’s envelope and echo no input', () => {
    const marker = 'hostile-marker-7f3a';

    it('answers a path parameter over 100 characters with 400 in the user envelope, without echoing the URL', async () => {
      const path = `/v1/contacts/${marker}${'x'.repeat(120)}`;
      const res = await request(url).get(path).set(user.auth);
      expectRefused(res, path, { status: 400, code: 'BAD_REQUEST' });
      expect(res.text).not.toContain(marker);
    });

    it('answers a path parameter over 100 characters with 400 problem details on the provider platform', async () => {
      const path = `/v1/providers/apps/${marker}${'x'.repeat(120)}/webhook`;
      const res = await request(url).put(path).set(appAuth).send({ enabled: true });
      expectRefused(res, path, { status: 400, code: 'invalid_format' });
      expect(res.text).not.toContain(marker);
      expect(res.body.instance).not.toContain(marker);
    });

    it('answers a malformed percent-encoding in a path parameter with 400 in the envelope', async () => {
      const path = '/v1/providers/apps/%E0%A4%A/webhook';
      const res = await request(url).get(path).set(appAuth);
      expectRefused(res, path, { status: 400, code: 'invalid_format' });
    });

    it('answers a body over 1 MiB with 413 in the envelope', async () => {
      const res = await request(url)
        .post('/v1/contacts')
        .set(user.auth)
        .send({ name: 'x'.repeat(1024 * 1024 + 10) });
      expectRefused(res, '/v1/contacts', { status: 413, code: 'PAYLOAD_TOO_LARGE' });
    });

    it('answers an unsupported content type with 415 without echoing it', async () => {
      const res = await request(url).post('/v1/contacts').set(user.auth).set('content-type', `text/${marker}`).send('name=x');
      expectRefused(res, '/v1/contacts', { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
      expect(res.text).not.toContain(marker);
      const platform = await request(url).post('/v1/providers/apps').set(devAuth).set('content-type', `text/${marker}`).send('x');
      expectRefused(platform, '/v1/providers/apps', { status: 415, code: 'unsupported_media_type' });
      expect(platform.text).not.toContain(marker);
    });

    it('answers malformed JSON with 400 in the envelope', async () => {
      const res = await request(url).post('/v1/contacts').set(user.auth).set('content-type', 'application/json').send(`{"${marker}":`);
      expectRefused(res, '/v1/contacts', { status: 400, code: 'BAD_REQUEST' });
      expect(res.text).not.toContain(marker);
    });

    it('answers an unknown route and an unsupported method with 404 in the envelope, without echoing the path', async () => {
      const unknown = await request(url).get(`/v1/${marker}`);
      expectRefused(unknown, `/v1/${marker}`, { status: 404, code: 'NOT_FOUND' });
      expect(unknown.text).not.toContain(marker);
      const platform = await request(url).get(`/v1/providers/${marker}`);
      expectRefused(platform, `/v1/providers/${marker}`, { status: 404, code: 'not_found' });
      // GET and DELETE /v1/me exist; PUT does not.
      const method = await request(url).put('/v1/me').set(user.auth).send({});
      expectRefused(method, '/v1/me', { status: 404, code: 'NOT_FOUND' });
    });
  });

  describe('an instance that is shutting down', () => {
    it('refuses new requests with 503 in the path’s envelope, Retry-After and Connection: close', async () => {
      const draining = await env.startApi();
      await request(draining.url).get('/v1/me').set(user.auth).expect(200);
      draining.app.get(HttpDrain).draining = true;
      for (const path of ['/v1/me', '/v1/providers/apps']) {
        const res = await request(draining.url)
          .get(path)
          .set(path.startsWith('/v1/providers') ? devAuth : user.auth);
        expectRefused(res, path, { status: 503, code: path.startsWith('/v1/providers') ? 'service_unavailable' : 'SERVICE_UNAVAILABLE' });
        expect(res.headers['retry-after']).toBe('1');
        expect(res.headers.connection).toBe('close');
      }
    });
  });

  describe('what Node’s HTTP parser refuses is answered in the envelope too', () => {
    /** Writes raw bytes on a socket and reads the whole answer (the server closes the connection). */
    function raw(bytes: string): Promise<{ status: number; headers: Record<string, string>; body: unknown }> {
      const { hostname, port } = new URL(url);
      return new Promise((resolve, reject) => {
        const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(bytes));
        let received = '';
        socket.setEncoding('latin1');
        socket.on('data', (chunk: string) => (received += chunk));
        socket.on('error', reject);
        socket.on('close', () => {
          const [head, body] = received.split('\r\n\r\n');
          const [statusLine, ...lines] = head.split('\r\n');
          const headers = Object.fromEntries(
            lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
          );
          resolve({ status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) });
        });
      });
    }

    it('answers headers over the limit with 431 in the path’s envelope and a request id', async () => {
      const big = 'x'.repeat(20_000);
      const user = await raw(`GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`);
      expect(user).toEqual({
        status: 431,
        headers: expect.objectContaining({
          'content-type': 'application/json',
          'x-service-request-id': expect.stringMatching(REQUEST_ID),
          'x-ratelimit-limit': expect.stringMatching(/^\d+$/),
          'x-ratelimit-remaining': expect.stringMatching(/^\d+$/),
        }),
        body: { error: { code: 'BAD_REQUEST', message: expect.any(String), status: 431 } },
      });
      const platform = await raw(`GET /v1/providers/apps HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`);
      expect(platform.status).toBe(431);
      expect(platform.headers['content-type']).toBe('application/problem+json');
      expect(platform.body).toMatchObject({ status: 431, instance: '/v1/providers/apps', type: expect.stringMatching(/#bad_request$/) });
    });

    it('answers bytes that are not HTTP with 400 in the user envelope', async () => {
      const res = await raw('NOT HTTP AT ALL\r\n\r\n');
      expect(res.status).toBe(400);
      expect(res.headers['x-service-request-id']).toMatch(REQUEST_ID);
      expect(res.body).toEqual({ error: { code: 'BAD_REQUEST', message: 'The request is not valid HTTP', status: 400 } });
    });
  });

  describe('smaller gaps', () => {
    it('bounds the userId (64) and action (100) of a validly signed inbound webhook', async () => {
      const path = '/v1/providers/runtime/webhook';
      expectRefused(await inbound({ userId: 'u'.repeat(10_000) }), path, { status: 400, code: 'invalid_format', field: 'userId' });
      expectRefused(await inbound({ action: 'a'.repeat(10_000) }), path, { status: 400, code: 'invalid_format', field: 'action' });
      expectRefused(await inbound({ userId: 'u'.repeat(65) }), path, { status: 400, code: 'invalid_format', field: 'userId' });
      await inbound({ userId: 'u'.repeat(64), action: 'a'.repeat(100) }).expect(202);
      const long = await inbound({ event: `e${'v'.repeat(10_000)}` });
      expectRefused(long, path, { status: 400, code: 'invalid_format', field: 'event' });
      expect(long.text.length).toBeLessThan(2_000);
    });

    it('applies the limits of the execution context (locale, timezone) instead of passing them on unchecked', async () => {
      const path = `/v1/providers/packages/${packageId}/capabilities/balance/execute`;
      const res = await request(url)
        .post(path)
        .set(user.auth)
        .send({ params: { account: 'checking' }, context: { locale: 'x'.repeat(100) } });
      expectRefused(res, path, { status: 400, code: 'invalid_format' });
      expect(res.text).toContain('locale');
    });

    it('documents the 8,192-character limit of firebase_token in the OpenAPI document', async () => {
      const res = await request(url).get('/docs/openapi.json').expect(200);
      expect(res.body.components.schemas.LoginDto.properties.firebase_token.maxLength).toBe(8192);
    });
  });
});
