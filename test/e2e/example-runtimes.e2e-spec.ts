import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import request from 'supertest';
import { RuntimeTokens } from '../../src/modules/access/runtime-tokens';
import { REFUSED_TOKENS, TestTraffic } from '@soul-service/rules';
import { freePort } from '../support/free-port';
import { SpawnedRole, TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { appToken, onboardDeveloper, OnboardedDeveloper, publishVersion, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { TEST_CA_DIR, testCertificate } from '../support/test-ca';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';

const EXAMPLES = join(__dirname, '../../docs/examples');
const EXAMPLES_PAGE = join(__dirname, '../../docs/examples.md');
const MODES = ['state', 'action', 'history', 'realtime', 'webhook'] as const;
type Mode = (typeof MODES)[number];
/** The file every example runtime imports, shown on the page like the runtimes. */
const SHARED = 'shared/runtime.mjs';

type Json = Record<string, unknown>;
interface Check {
  id: string;
  passed: boolean;
  points: number;
  max: number;
  detail: string;
}

const examplePackage = (mode: Mode) => JSON.parse(readFileSync(join(EXAMPLES, mode, 'package.json'), 'utf8')) as Json;

const decodeHtml = (html: string) =>
  html
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

/** The text of every code block of a served docs page, as a reader copies it. */
const codeBlocks = (html: string) => [...html.matchAll(/<pre><code[^>]*>([\s\S]*?)<\/code><\/pre>/g)].map((m) => decodeHtml(m[1]));

/**
 * The example runtimes of docs/examples, each run as its own process exactly as the page tells a provider to run it
 * (`node runtime.mjs` with environment variables), over HTTPS with a certificate of the test CA: full conformance
 * passes without a single failing check, the runtime refuses every token conformance's security check presents,
 * and a live call through the service works. So the examples on /developers/examples cannot rot.
 */
describe('example runtimes (docs/examples): full conformance and a live call, per mode', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let url: string;
  let tokens: RuntimeTokens;
  let redis: Redis;
  let developer: OnboardedDeveloper;
  let user: LoggedInUser;
  const children: SpawnedRole[] = [];

  beforeAll(async () => {
    testCertificate('trusted'); // makes sure tmp/test-ca holds the CA and the 127.0.0.1 certificate the runtimes serve
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create({
      SMTP_URL: smtp.url,
      ...idp.env,
      RUNTIME_TICK_MS: '250',
      REALTIME_RECONNECT_BASE_MS: '100',
      WEBHOOK_RETRY_BASE_MS: '200',
    });
    const api = await env.startApi();
    url = api.url;
    tokens = api.app.get(RuntimeTokens);
    await env.startWorker();
    redis = new Redis(env.env.REDIS_URL);
    developer = await onboardDeveloper(url, smtp, 'examples@example.com');
    user = await login(url, idp, { sub: 'uid-examples', name: 'Example User', email: 'example-user@example.com' });
  }, 60_000);

  afterAll(async () => {
    for (const child of children) await child.kill();
    redis?.disconnect();
    await env?.close();
    await idp?.close();
    await smtp?.close();
  });

  /** Starts `node docs/examples/<mode>/runtime.mjs` with the settings the page documents, and waits until it listens. */
  async function startRuntime(mode: Mode, port: number, settings: Record<string, string>): Promise<{ child: SpawnedRole; url: string }> {
    const child = new SpawnedRole(
      spawn(process.execPath, [join(EXAMPLES, mode, 'runtime.mjs')], {
        cwd: join(EXAMPLES, mode),
        env: {
          PATH: process.env.PATH ?? '',
          SERVICE_URL: url,
          // Runtime tokens carry the service's public base URL as issuer; the test reaches the service on another port.
          TOKEN_ISSUER: env.config().publicBaseUrl,
          TLS_CERT: join(TEST_CA_DIR, 'server.pem'),
          TLS_KEY: join(TEST_CA_DIR, 'server-key.pem'),
          HOST: '127.0.0.1',
          PORT: String(port),
          ...settings,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    children.push(child);
    const [, listening] = await child.waitForOutput(/runtime listening on (https:\/\/\S+)/);
    return { child, url: listening };
  }

  /** Creates the example package for the app and the runtime, as a provider would from the file. */
  async function createPackage(mode: Mode, appId: string, auth: { authorization: string }, runtimeUrl: string) {
    const res = await request(url)
      .post('/v1/providers/packages')
      .set(auth)
      .send({ ...examplePackage(mode), appId, runtimeUrl });
    expect({ status: res.status, body: res.status === 201 ? 'created' : res.body }).toEqual({ status: 201, body: 'created' });
    return { packageId: res.body.id as string, versionId: res.body.versions[0].id as string };
  }

  async function fullConformance(auth: { authorization: string }, packageId: string, versionId: string) {
    const queued = await request(url).post(`/v1/providers/packages/${packageId}/versions/${versionId}/validate?full=true`).set(auth);
    expect(queued.status).toBe(202);
    return waitFor(
      async () => {
        const run = await request(url).get(`/v1/providers/conformance/${queued.body.id}`).set(auth).expect(200);
        return ['completed', 'failed'].includes(run.body.status) ? (run.body as Json) : undefined;
      },
      { what: 'the full conformance run', timeoutMs: 60_000, intervalMs: 200 },
    );
  }

  /** The four calls of conformance's `security.token_verification`, sent by the test itself: each must get 401. */
  async function refusedTokenStatuses(runtimeUrl: string, appId: string, path: string, method: 'GET' | 'POST') {
    const traffic = new TestTraffic(tokens, appId);
    const statuses: Record<string, number> = {};
    for (const { kind } of REFUSED_TOKENS) {
      const res = await fetch(`${runtimeUrl}${path}`, {
        method,
        headers: {
          ...(await traffic.refusedHeaders(kind)),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: method === 'POST' ? '{}' : undefined,
      });
      statuses[kind] = res.status;
      await res.body?.cancel();
    }
    return statuses;
  }

  /** Where each runtime is probed for token verification: its capability's path. */
  const probe: Record<Mode, { path: string; method: 'GET' | 'POST' }> = {
    state: { path: '/capabilities/balance/execute', method: 'POST' },
    action: { path: '/capabilities/transfer/execute', method: 'POST' },
    history: { path: '/capabilities/transactions/execute', method: 'POST' },
    realtime: { path: '/capabilities/ticker/stream', method: 'GET' },
    webhook: { path: '/capabilities/meeting_updates/execute', method: 'POST' },
  };

  /** What a live call through the service answers, per mode, after the user installed the package. */
  const liveCall: Record<Mode, (packageId: string, installId: string) => Promise<void>> = {
    state: async (packageId) => {
      const res = await request(url)
        .post(`/v1/providers/packages/${packageId}/capabilities/balance/execute`)
        .set(user.auth)
        .send({ params: { account: 'checking' } });
      expect(res.status).toBe(200);
      // The live store, not the fixture (1520.75) that test traffic gets: the runtime saw livemode true.
      expect(res.body).toMatchObject({ status: 'ok', data: { available: 2315.4, currency: 'EUR' }, metadata: { source: 'core-banking' } });
    },
    action: async (packageId) => {
      const input = { toAccount: 'DE89370400440532013000', amount: 25, currency: 'EUR', reference: 'Dinner' };
      const pending = await request(url)
        .post(`/v1/providers/packages/${packageId}/capabilities/transfer/execute`)
        .set(user.auth)
        .send({ input })
        .expect(202);
      const confirmed = await request(url).post(`/v1/actions/${pending.body.confirmationId}/confirm`).set(user.auth).expect(200);
      expect(confirmed.body).toMatchObject({
        status: 'completed',
        result: { transferId: 'tr_0001', state: 'completed' },
        message: 'Sent 25 EUR.',
      });
    },
    history: async (packageId) => {
      const execute = (params: Json) =>
        request(url).post(`/v1/providers/packages/${packageId}/capabilities/transactions/execute`).set(user.auth).send({ params });
      const first = await execute({ account: 'checking', limit: 5 }).expect(200);
      expect(first.body).toMatchObject({ status: 'ok', totalCount: 12, cursor: { hasMore: true } });
      expect(first.body.items.map((i: Json) => i.id)).toEqual(['tx_live_012', 'tx_live_011', 'tx_live_010', 'tx_live_009', 'tx_live_008']);
      const second = await execute({ account: 'checking', limit: 5, cursor: first.body.cursor.next }).expect(200);
      expect(second.body.items[0].id).toBe('tx_live_007');
    },
    realtime: async (packageId, installId) => {
      const channel = `${env.env.REDIS_PREFIX}:capability:${installId}:ticker`;
      const subscriber = new Redis(env.env.REDIS_URL);
      const messages: Array<{ type: string; data?: { pair?: string; rate?: number } }> = [];
      try {
        await subscriber.subscribe(channel);
        subscriber.on('message', (_channel, message: string) => messages.push(JSON.parse(message)));
        const res = await request(url)
          .post(`/v1/providers/packages/${packageId}/capabilities/ticker/execute`)
          .set(user.auth)
          .send({})
          .expect(202);
        expect(res.body).toMatchObject({ status: 'subscribed', channel });
        // The worker's stream supervisor connected with a live token and relays the runtime's data events.
        const data = await waitFor(() => messages.find((m) => m.type === 'data'), { what: 'relayed ticker data', timeoutMs: 20_000 });
        expect(data.data).toEqual({ pair: 'EURUSD', rate: expect.any(Number) });
      } finally {
        subscriber.disconnect();
      }
    },
    webhook: async (_packageId, installId) => {
      // install.created reached the runtime's /webhooks, signed; the runtime pushed the user's next meeting back to
      // POST /v1/providers/runtime/webhook, and the service stored it as the capability's state for the install.
      const cached = await waitFor(
        async () => (await redis.get(`${env.env.REDIS_PREFIX}:state:${installId}:meeting_updates`)) ?? undefined,
        {
          what: 'the pushed meeting in the state cache',
          timeoutMs: 20_000,
        },
      );
      expect(JSON.parse(cached)).toMatchObject({
        source: 'webhook',
        data: { meetingId: `mtg_welcome_${user.id}`, title: 'Welcome call', startsAt: expect.any(String) },
      });
    },
  };

  it.each(MODES)(
    '%s: the example package passes full conformance with no failing check, refuses bad tokens, and answers a live call',
    async (mode) => {
      const port = await freePort();
      const webhookUrl = mode === 'webhook' ? `https://127.0.0.1:${port}/webhooks` : undefined;
      const app = await registerApp(url, developer, { name: `Acme ${mode}`, webhook_url: webhookUrl });
      const appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
      const runtime = await startRuntime(mode, port, {
        APP_ID: app.id,
        ...(mode === 'webhook' ? { WEBHOOK_SECRET: app.webhook_secret!, CLIENT_ID: app.client_id, CLIENT_SECRET: app.client_secret } : {}),
      });

      const { packageId, versionId } = await createPackage(mode, app.id, appAuth, runtime.url);
      const report = await fullConformance(appAuth, packageId, versionId);
      const checks = Object.values(report.dimensions as Record<string, { checks: Check[] }>).flatMap((d) => d.checks);
      expect({ status: report.status, failing: checks.filter((c) => !c.passed) }).toEqual({ status: 'completed', failing: [] });
      expect(report).toMatchObject({ passed: true, score: 100 });
      const tokenCheck = checks.find((c) => c.id === 'security.token_verification')!;
      // The webhook package has no capability the service calls, so conformance has nothing to probe there; the test does.
      if (mode !== 'webhook') expect(tokenCheck).toMatchObject({ passed: true, points: tokenCheck.max, max: expect.any(Number) });
      expect(tokenCheck.max > 0 || mode === 'webhook').toBe(true);
      // The webhook example's receiver is probed with signed and unsigned deliveries; the other apps have no webhook URL.
      const signatureCheck = checks.find((c) => c.id === 'error_handling.webhook_signature')!;
      expect(signatureCheck.max > 0).toBe(mode === 'webhook');
      expect(await refusedTokenStatuses(runtime.url, app.id, probe[mode].path, probe[mode].method)).toEqual({
        none: 401,
        expired: 401,
        forged: 401,
        other_app: 401,
      });

      await publishVersion(url, appAuth, packageId, versionId);
      const install = await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201);
      await liveCall[mode](packageId, install.body.id as string);
      expect(runtime.child.output).not.toMatch(/Error|failed/);
    },
    90_000,
  );

  it('shows every example package and runtime on /developers/examples exactly as the files are', async () => {
    const page = await request(url).get('/developers/examples').expect(200);
    const served = codeBlocks(page.text);
    const files = [SHARED, ...MODES.flatMap((mode) => [`${mode}/package.json`, `${mode}/runtime.mjs`])];
    for (const file of files) {
      const text = readFileSync(join(EXAMPLES, file), 'utf8').replace(/\n$/, '');
      const shown = served.some((block) => block.replace(/\n$/, '') === text);
      // When this fails, copy the file into its code block in docs/examples.md (the page shows each file whole).
      expect({ file, shownOnThePage: shown }).toEqual({ file, shownOnThePage: true });
    }
    // The Markdown source says the same as the served page (the page is rendered from it at start-up).
    expect(readFileSync(EXAMPLES_PAGE, 'utf8')).toContain('# Example runtimes');
  });
});
