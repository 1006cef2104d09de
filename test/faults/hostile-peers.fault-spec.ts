import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import request from 'supertest';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';
import { WebhookReceiver } from '../support/webhook-receiver';
import { expectCleanError } from './envelopes';

/**
 * Peers that misbehave on purpose: a webhook receiver that never answers, one
 * that answers an enormous body, a realtime runtime that streams garbage and a
 * runtime that redirects to private addresses. Each is contained by its limit.
 */
describe('slow and hostile peers', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let receiver: WebhookReceiver;
  let canary: Server;
  let canaryHits: string[];
  let canaryUrl: string;
  let url: string;
  let appAuth: { authorization: string };
  let appId: string;
  let user: LoggedInUser;
  let packageId: string;
  let installId: string;
  let redis: Redis;

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    receiver = await WebhookReceiver.start();
    // Stands in for a private service (metadata endpoint, admin port): it must never be reached through a redirect.
    canaryHits = [];
    canary = createServer((req, res) => {
      canaryHits.push(req.url ?? '');
      res.end('secret');
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
    canaryUrl = `http://127.0.0.1:${(canary.address() as AddressInfo).port}/latest/meta-data/iam`;
    env = await TestEnvironment.create({
      SMTP_URL: smtp.url,
      ...idp.env,
      WEBHOOK_RETRY_BASE_MS: '1',
      WEBHOOK_SWEEP_INTERVAL_MS: '1000',
      RUNTIME_TIMEOUT_MS: '1500',
      RUNTIME_RETRY_BASE_MS: '20',
      RUNTIME_RETRY_BUDGET_MS: '5000',
      REALTIME_RECONNECT_BASE_MS: '100',
    });
    ({ url } = await env.startApi());
    redis = new Redis(env.env.REDIS_URL);
    await env.startWorker({ env: { RUNTIME_TICK_MS: '250' } });
    const developer = await onboardDeveloper(url, smtp, 'hostile@example.com');
    const app = await registerApp(url, developer, { webhook_url: receiver.url });
    appId = app.id;
    appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    user = await login(url, idp, { sub: 'uid-hostile', name: 'Hostile', email: 'hostile-user@example.com' });
    ({ packageId } = await publishPackage(url, appAuth, {
      appId,
      name: 'Hostile Bank',
      slug: 'hostile-bank',
      description: 'Balances and a ticker',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      capabilities: goodPackageCapabilities(),
    }));
    installId = (await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201)).body.id;
    await request(url)
      .put(`/v1/providers/apps/${appId}/webhook`)
      .set(appAuth)
      .send({ event_types: ['install.created'], timeout_seconds: 1 })
      .expect(201);
  }, 120_000);

  afterAll(async () => {
    redis?.disconnect();
    await env?.close();
    await receiver?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
    canary?.closeAllConnections();
    await new Promise<void>((resolve) => (canary ? canary.close(() => resolve()) : resolve()));
  });

  afterEach(() => {
    receiver.reset();
    runtime.script.length = 0;
  });

  const hook = (path = '') => `/v1/providers/apps/${appId}/webhook${path}`;
  async function sendTest(): Promise<{ id: string; event_id: string }> {
    return (await request(url).post(hook('/test')).set(appAuth).send({ type: 'install.created' }).expect(202)).body;
  }
  async function settled(id: string, timeoutMs = 30_000) {
    return waitFor(
      async () => {
        const res = await request(url)
          .get(hook(`/deliveries/${id}`))
          .set(appAuth)
          .expect(200);
        return res.body.status === 'pending'
          ? undefined
          : (res.body as Record<string, unknown> & { attempts: Array<Record<string, unknown>> });
      },
      { what: `delivery ${id} to settle`, timeoutMs, intervalMs: 100 },
    );
  }

  it('a receiver that never answers: each attempt times out and is retried, the delivery is not stuck', async () => {
    receiver.respondWith({ status: 200, hang: true }, { status: 200, hang: true });
    const delivery = await sendTest();
    const done = await settled(delivery.id);
    expect(done.status).toBe('delivered');
    expect(done.attempts.length).toBe(3);
    for (const attempt of done.attempts.slice(0, 2)) {
      expect(attempt.status_code).toBeNull();
      expect(attempt.outcome).not.toBe('delivered');
      expect(String(attempt.error_class)).toMatch(/timeout/i);
    }
    expect(done.attempts[2]).toMatchObject({ status_code: 200 });
    expect(receiver.of(delivery.event_id)).toHaveLength(3);
  });

  it('a receiver that answers an 8 MiB body: the attempt log keeps only the first 4 KB and retries', async () => {
    receiver.respondWith({ status: 500, headers: { 'content-type': 'text/plain' }, body: 'E'.repeat(8 * 1024 * 1024) });
    const delivery = await sendTest();
    const done = await settled(delivery.id);
    expect(done.status).toBe('delivered');
    const [first] = done.attempts;
    expect(first.status_code).toBe(500);
    const stored = typeof first.response_body === 'string' ? first.response_body : '';
    expect(stored.length).toBeGreaterThan(0);
    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(4096);
    expect(stored).toMatch(/^E+$/);
    // The service is still responsive after reading (part of) a huge answer.
    await request(url).get('/health/live').expect(200);
  });

  describe('a runtime that redirects to a private address', () => {
    for (const target of ['canary', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/admin'] as const) {
      it(`is not followed (${target === 'canary' ? 'http://127.0.0.1 canary' : target})`, async () => {
        const location = target === 'canary' ? canaryUrl : target;
        for (const status of [301, 302, 303, 307, 308]) {
          runtime.scriptNext(...Array.from({ length: 5 }, () => ({ status, raw: '', headers: { location } })));
          await redis.del(`${env.env.REDIS_PREFIX}:state:${installId}:balance`);
          const calls = runtime.requestsTo('/capabilities/balance/execute').length;
          const path = `/v1/providers/packages/${packageId}/capabilities/balance/execute`;
          const res = await request(url)
            .post(path)
            .set(user.auth)
            .send({ params: { account: 'checking' } });
          // The runtime was really called and answered the redirect; the service did not treat it as data.
          expect(runtime.requestsTo('/capabilities/balance/execute').length).toBeGreaterThan(calls);
          expect(runtime.script.length).toBeLessThan(5);
          expect(res.status).not.toBe(200);
          expectCleanError(res, path, { allow5xx: [500, 502, 503, 504] });
          expect(JSON.stringify(res.body)).not.toContain('secret');
          runtime.script.length = 0;
        }
        expect(canaryHits).toEqual([]);
      });
    }
  });

  it('a realtime stream of garbage: the supervisor survives, reconnects and relays clean data afterwards', async () => {
    const channel = `${env.env.REDIS_PREFIX}:capability:${installId}:ticker`;
    const subscriber = new Redis(env.env.REDIS_URL);
    const messages: unknown[] = [];
    try {
      runtime.streamGarbage = true;
      await subscriber.subscribe(channel);
      subscriber.on('message', (_c, message: string) => messages.push(JSON.parse(message)));
      const before = runtime.requestsTo('/capabilities/ticker/stream').length;
      await request(url).post(`/v1/providers/packages/${packageId}/capabilities/ticker/execute`).set(user.auth).send({}).expect(202);
      await waitFor(() => runtime.requestsTo('/capabilities/ticker/stream').length > before, { what: 'a garbage stream opened' });
      // Let garbage flow for a while, including frames larger than any sane event.
      await new Promise((r) => setTimeout(r, 2_000));
      for (const m of messages as Array<{ type?: unknown; data?: unknown }>) {
        expect(['data', 'stale']).toContain(m.type);
        if (m.type === 'data') expect(typeof m.data === 'object' && m.data !== null).toBe(true);
      }
      runtime.streamGarbage = false;
      await runtime.behave('down');
      await runtime.behave('conforming');
      await waitFor(
        () =>
          (messages as Array<{ type?: string; data?: { rate?: unknown } }>).some(
            (m) => m.type === 'data' && typeof m.data?.rate === 'number',
          ),
        {
          what: 'clean data relayed after the garbage',
          timeoutMs: 20_000,
        },
      );
      await request(url).get('/health/ready').expect(200);
    } finally {
      runtime.streamGarbage = false;
      subscriber.disconnect();
    }
  });
});
