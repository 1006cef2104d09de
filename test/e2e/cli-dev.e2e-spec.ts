import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { CallContext, CapabilityDescriptor, defineRuntime } from '@soul-service/runtime-sdk';
import { APP_CONFIG } from '../../src/config/config.module';
import type { AppConfig } from '../../src/config/app-config';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities } from '../support/provider-runtime';
import {
  appToken,
  DEVELOPER_PASSWORD,
  onboardDeveloper,
  OnboardedDeveloper,
  publishPackage,
  registerApp,
  RegisteredApp,
} from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { bundleSoulCli, startSoul } from '../support/soul-cli';
import { assertTestCaTrusted, testCertificate } from '../support/test-ca';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';

const DEVELOPER_EMAIL = 'dev-tunnel@example.com';
/** Short, so a revoked credential ends the stream within the test (15 s by default). */
const RENEW_MS = 400;
const capabilities = () =>
  (goodPackageCapabilities() as Array<{ type: string; name: string }>).filter((c) => c.name === 'balance' || c.name === 'transfer');

/**
 * `soul dev`: the CLI, as a subprocess, opens the app's dev session on the real service; the service's bridge
 * then sends the developer's own installs' calls (their user account has the developer's verified email) to a
 * runtime on 127.0.0.1 over plain HTTP, which has no public URL, with the service's real runtime tokens. Every
 * other user's calls still go to the published runtime.
 */
describe('soul dev against the real service', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let url: string;
  let config: AppConfig;
  let app: RegisteredApp;
  let developer: OnboardedDeveloper;
  let appAuth: { authorization: string };
  let publicRuntime: HttpsServer;
  let localRuntime: HttpServer;
  let localUrl: string;
  let packageId: string;
  let developerUser: LoggedInUser;
  let otherUser: LoggedInUser;
  let bundle: string;
  let configDir: string;
  const localCalls: CallContext[] = [];

  /** The same runtime code; `where` tells the answers apart (the balance each gives). */
  const runtime = (where: 'public' | 'local') =>
    defineRuntime({
      descriptor: { capabilities: capabilities() as CapabilityDescriptor[] },
      serviceUrl: config.publicBaseUrl,
      jwksUrl: `${url}/.well-known/jwks.json`,
      appId: app.id,
      handlers: {
        balance: async (_params: Record<string, unknown>, context: CallContext) => {
          if (where === 'local') localCalls.push(context);
          return { data: { available: where === 'local' ? 4242 : 1520.75, currency: 'EUR' } };
        },
        transfer: async () => ({ result: { transferId: `tr_${where}`, state: 'completed' }, message: 'Sent.' }),
      },
    });

  const balance = (user: LoggedInUser) =>
    request(url)
      .post(`/v1/providers/packages/${packageId}/capabilities/balance/execute`)
      .set(user.auth)
      .send({ params: { account: 'checking' } });

  beforeAll(async () => {
    assertTestCaTrusted();
    bundle = bundleSoulCli('soul-cli-dev-e2e');
    configDir = mkdtempSync(join(tmpdir(), 'soul-dev-config-'));
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env, DEV_SESSION_RENEW_MS: String(RENEW_MS) });
    const api = await env.startApi();
    url = api.url;
    config = api.app.get<AppConfig>(APP_CONFIG);
    await env.startWorker();
    developer = await onboardDeveloper(url, smtp, DEVELOPER_EMAIL);
    app = await registerApp(url, developer, { webhook_url: undefined });
    appAuth = { authorization: `Bearer ${await appToken(url, app)}` };

    publicRuntime = createHttpsServer(testCertificate('trusted'), runtime('public').listener());
    await new Promise<void>((resolve) => publicRuntime.listen(0, '127.0.0.1', resolve));
    const runtimeUrl = `https://127.0.0.1:${(publicRuntime.address() as AddressInfo).port}`;
    localRuntime = createHttpServer(runtime('local').listener());
    await new Promise<void>((resolve) => localRuntime.listen(0, '127.0.0.1', resolve));
    localUrl = `http://127.0.0.1:${(localRuntime.address() as AddressInfo).port}`;

    ({ packageId } = await publishPackage(url, appAuth, {
      appId: app.id,
      name: 'Dev Bank',
      slug: 'dev-bank',
      description: 'Balances and transfers, developed against the live service',
      riskTier: 'action_capable',
      runtimeUrl,
      capabilities: capabilities().map((c) => ({ ...c, runtimeUrl })),
    }));
    // The developer's own user account: the same address, verified by the identity provider.
    developerUser = await login(url, idp, { sub: 'uid-dev-own', name: 'Dev', email: DEVELOPER_EMAIL });
    otherUser = await login(url, idp, { sub: 'uid-dev-other', name: 'Olga', email: 'olga@example.com' });
    for (const user of [developerUser, otherUser]) {
      await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201);
    }
  }, 90_000);

  afterAll(async () => {
    await env?.close();
    for (const server of [publicRuntime, localRuntime]) if (server) await new Promise((resolve) => server.close(resolve));
    await idp?.close();
    await smtp?.close();
  });

  it("sends the developer's own calls to the local runtime while soul dev runs, and nobody else's", async () => {
    expect((await balance(developerUser).expect(200)).body.data.available).toBe(1520.75);

    const dev = startSoul(bundle, ['dev', '--url', localUrl], {
      cwd: configDir,
      env: { SOUL_BASE_URL: url, SOUL_CONFIG_DIR: configDir, SOUL_TOKEN: appAuth.authorization.slice('Bearer '.length) },
    });
    try {
      await waitFor(() => dev.stdout().includes('"ready"') || dev.stdout().includes('session_id'), {
        what: `soul dev to be ready (${dev.stdout()})`,
      });
      const mine = await balance(developerUser).expect(200);
      expect(mine.body.data).toEqual({ available: 4242, currency: 'EUR' });
      // A live call with the service's real runtime token, verified by the local runtime against the JWKS.
      expect(localCalls).toHaveLength(1);
      expect(localCalls[0]).toMatchObject({ userId: developerUser.id, livemode: true, requestId: mine.body.requestId });

      const theirs = await balance(otherUser).expect(200);
      expect(theirs.body.data.available).toBe(1520.75);
      expect(localCalls).toHaveLength(1);
    } finally {
      dev.child.kill('SIGINT');
      expect((await dev.done).code).toBe(0);
    }
    // The session ended with the stream: the developer's calls go to the published runtime again.
    await waitFor(async () => (await balance(developerUser)).body.data?.available === 1520.75, {
      what: 'calls back on the public runtime',
    });
  });

  it('refuses a stream for another developer’s app (403), and answers to calls that are not waiting (404) or malformed (400)', async () => {
    const stranger = await onboardDeveloper(url, smtp, 'stranger-dev@example.com');
    const res = await request(url).get(`/v1/providers/dev/session?app_id=${app.id}`).set(stranger.auth);
    // As every app route answers another developer's app.
    expect(res.status).toBe(403);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.body.type).toMatch(/#insufficient_scope$/);
    await request(url)
      .post('/v1/providers/dev/session/calls/dcall_0123456789ABCDEFabcdef')
      .set(appAuth)
      .send({ status: 200, body: '{}' })
      .expect(404);
    await request(url).post('/v1/providers/dev/session/calls/dcall_0123456789ABCDEFabcdef').set(appAuth).send({ status: 'x' }).expect(400);
    // A runtime answer larger than the service's usual 1 MiB request limit is carried (the largest tier allows 5 MB).
    await request(url)
      .post('/v1/providers/dev/session/calls/dcall_0123456789ABCDEFabcdef')
      .set(appAuth)
      .send({ status: 200, body: 'x'.repeat(3 * 1024 * 1024) })
      .expect(404);
  });

  /** A console session of the developer's own, to be signed out. */
  const consoleToken = async () =>
    (await request(url).post('/v1/providers/auth/login').send({ email: DEVELOPER_EMAIL, password: DEVELOPER_PASSWORD }).expect(200)).body
      .token as string;

  /** Opens the app's dev session stream as the CLI would, with a console session of its own; read it with `readUntil`. */
  const openSession = async () => {
    const token = await consoleToken();
    const response = await fetch(`${url}/v1/providers/dev/session?app_id=${app.id}`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    const session = {
      token,
      reader,
      text: '',
      async readUntil(done: () => boolean) {
        while (!done()) {
          const chunk = await reader.read();
          if (chunk.done) return;
          session.text += decoder.decode(chunk.value, { stream: true });
        }
      },
    };
    return session;
  };

  it('ends the stream with `event: end` at the next check once its credential is revoked, and no call is routed to it after', async () => {
    const session = await openSession();
    await session.readUntil(() => session.text.includes('event: ready'));
    // Several checks pass while the credential stands: the stream stays open (pings) and routes.
    await session.readUntil(() => session.text.split(': ping').length > 3);
    expect(session.text).not.toContain('event: end');

    await request(url)
      .post('/v1/providers/auth/logout')
      .set({ authorization: `Bearer ${session.token}` })
      .expect(204);
    await session.readUntil(() => false);
    const end = /event: end\ndata: (.*)\n/.exec(session.text);
    expect(end).not.toBeNull();
    expect(JSON.parse(end![1])).toEqual({ code: 'invalid_token', detail: expect.stringMatching(/revoked/) });
    // The session went with the stream: the developer's calls reach the published runtime again.
    await waitFor(async () => (await balance(developerUser)).body.data?.available === 1520.75, {
      what: 'calls back on the public runtime',
    });
    // The developer's other console session is untouched.
    await request(url).get('/v1/providers/account').set(developer.auth).expect(200);
  });

  it('answers capability_timeout when a tunnelled call is never answered, at the bridge’s own timeout', async () => {
    const session = await openSession();
    try {
      await session.readUntil(() => session.text.includes('event: ready'));
      // Nothing answers the call the stream carries: the bridge gives up at its timeout (Free tier, 10 s) and says so.
      const started = Date.now();
      const res = await balance(developerUser);
      const waited = Date.now() - started;
      expect(res.status).toBe(504);
      expect(JSON.stringify(res.body)).toContain('capability_timeout');
      expect(waited).toBeGreaterThanOrEqual(config.runtimeBridge.timeoutMs - 100);
      await session.readUntil(() => session.text.includes('event: call'));
    } finally {
      // Ended as the service ends it: the credential goes, and the stream closes at the next check.
      await request(url)
        .post('/v1/providers/auth/logout')
        .set({ authorization: `Bearer ${session.token}` })
        .expect(204);
      await session.readUntil(() => false);
    }
    await waitFor(async () => (await balance(developerUser)).body.data?.available === 1520.75, {
      what: 'calls back on the public runtime',
    });
  }, 60_000);

  it('the CLI stops with the refusal when the service ends its session for a revoked credential, instead of reconnecting forever', async () => {
    const token = await consoleToken();
    const dev = startSoul(bundle, ['dev', '--url', localUrl, '--app', app.id], {
      cwd: configDir,
      env: { SOUL_BASE_URL: url, SOUL_CONFIG_DIR: configDir, SOUL_TOKEN: token, CI: 'true' },
    });
    try {
      await waitFor(() => dev.stdout().includes('session_id'), { what: `soul dev to be ready (${dev.stdout()})` });
      expect((await balance(developerUser).expect(200)).body.data.available).toBe(4242);
      await request(url)
        .post('/v1/providers/auth/logout')
        .set({ authorization: `Bearer ${token}` })
        .expect(204);
      const finished = await dev.done;
      expect(finished.code).not.toBe(0);
      expect(JSON.parse(finished.stderr.trim().split('\n').pop()!)).toMatchObject({ error: { status: 401, code: 'invalid_token' } });
    } finally {
      if (dev.child.exitCode === null) dev.child.kill('SIGINT');
    }
  });
});
