import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { PlatformTokens } from '../../src/modules/providers/auth/platform-tokens';
import { GatewayClient } from '../support/gateway-client';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import {
  appToken,
  DEVELOPER_PASSWORD,
  onboardDeveloper,
  OnboardedDeveloper,
  publishPackage,
  publishVersion,
  registerApp,
  RegisteredApp,
} from '../support/providers';
import { PUBLIC_ADDRESS, ScriptedDns } from '../support/scripted-dns';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted, certificateForHosts } from '../support/test-ca';
import { freshTotp } from '../support/totp';
import { login, LoggedInUser } from '../support/users';
import { expectCleanError } from './envelopes';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
/** A clean refusal of the path's dialect with this status and code. */
const refused = (res: request.Response, status: number, code?: string) =>
  expectCleanError(res, (res as request.Response & { req: { path: string } }).req.path, {
    status,
    code,
    allow5xx: status >= 500 ? [status] : [],
  });
const codeOf = (res: request.Response) => (res.status === 200 ? 'token' : String(res.body.type).split('#')[1]);
function tally(answers: request.Response[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const answer of answers) counts[codeOf(answer)] = (counts[codeOf(answer)] ?? 0) + 1;
  return counts;
}

/**
 * The attacks of the trust-boundary review (issue 15), replayed as an outsider
 * would against two api instances that share PostgreSQL and Redis, with a
 * worker beside them. Each attack succeeded on the service before the fixes;
 * `test/e2e/*` holds the detailed test of each, this file replays them all in
 * one run. Every refusal must also be a clean envelope, never a 5xx.
 */
describe('abuse: the attacks of the trust-boundary review, against two api instances', () => {
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;

  /** Two api instances and a worker on one fresh database and Redis prefix. */
  async function twoInstances(
    env: TestEnvironment,
  ): Promise<{ urls: [string, string]; dataSource: DataSource; platformTokens: PlatformTokens }> {
    const first = await env.startApi();
    const second = await env.startApi();
    await env.startWorker();
    return {
      urls: [first.url, second.url],
      dataSource: first.app.get(getDataSourceToken()),
      platformTokens: first.app.get(PlatformTokens),
    };
  }

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start({
      capabilities: goodPackageCapabilities().filter((c) => (c as { type: string }).type !== 'action'),
    });
  });
  afterAll(async () => {
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  describe('users, contacts, sockets and provider tokens', () => {
    let env: TestEnvironment;
    let urls: [string, string];
    let dataSource: DataSource;
    let platformTokens: PlatformTokens;
    let developer: OnboardedDeveloper;
    let app: RegisteredApp;
    let packageId: string;
    let alice: LoggedInUser;
    let bob: LoggedInUser;
    const sockets: GatewayClient[] = [];

    const execute = (url: string, auth: { authorization: string }, body: Record<string, unknown> = {}) =>
      request(url)
        .post(`/v1/providers/packages/${packageId}/capabilities/balance/execute`)
        .set(auth)
        .send({ params: { account: 'checking' }, ...body });

    /**
     * An install token of `user` (a delegated app token, as the authorization-code grant gives one), minted with
     * the service's `PlatformTokens`: runtimes receive runtime tokens, which the platform refuses (runtime-auth.e2e-spec.ts).
     */
    async function installTokenOf(user: LoggedInUser): Promise<string> {
      const installs = (await request(urls[0]).get('/v1/installs').set(user.auth).expect(200)).body.installs as Array<{
        id: string;
        package_id: string;
        scopes: string[];
      }>;
      const install = installs.find((i) => i.package_id === packageId);
      if (!install) throw new Error(`${user.id} has no install of ${packageId}`);
      return platformTokens.forApp({ id: app.id, developerId: developer.id }, install.scopes, new Date(Date.now() + 3600_000), {
        delegation: { userId: user.id, installId: install.id },
      });
    }

    beforeAll(async () => {
      env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
      ({ urls, dataSource, platformTokens } = await twoInstances(env));
      developer = await onboardDeveloper(urls[0], smtp, 'abuse-dev@example.com');
      app = await registerApp(urls[0], developer);
      ({ packageId } = await publishPackage(urls[0], bearer(await appToken(urls[0], app)), {
        appId: app.id,
        name: 'Abuse Bank',
        slug: 'abuse-bank',
        description: 'Balances',
        riskTier: 'data_only',
        runtimeUrl: runtime.url,
        capabilities: runtime.capabilities,
      }));
      alice = await login(urls[0], idp, { sub: 'uid-alice', name: 'Alice', email: 'alice@example.com' });
      bob = await login(urls[1], idp, { sub: 'uid-bob', name: 'Bob', email: 'bob@example.com' });
    }, 60_000);
    afterEach(() => {
      for (const socket of sockets.splice(0)) socket.socket.terminate();
    });
    afterAll(async () => {
      await env?.close();
    });

    it('an unverified email claim links to nothing: the impostor receives nothing meant for Dave', async () => {
      const impostor = await login(urls[0], idp, { sub: 'uid-impostor', email: 'dave@example.com', emailVerified: false });
      const impostorSocket = await GatewayClient.open(urls[1], impostor.token);
      sockets.push(impostorSocket);
      const contact = (
        await request(urls[0]).post('/v1/contacts').set(alice.auth).send({ name: 'Dave', email: 'dave@example.com' }).expect(201)
      ).body;
      const sent = await request(urls[0])
        .post('/v1/messages')
        .set(alice.auth)
        .send({ recipient_id: contact.id, content: 'for Dave only' })
        .expect(201);
      const [row] = await dataSource.query(`SELECT recipient_user_id FROM message_recipients WHERE message_id = $1`, [sent.body.id]);
      expect(row.recipient_user_id).toBeNull();
      // The real Dave proves the address; the next message reaches him and only him.
      const dave = await login(urls[1], idp, { sub: 'uid-dave', email: 'dave@example.com' });
      const again = await request(urls[1])
        .post('/v1/messages')
        .set(alice.auth)
        .send({ recipient_id: contact.id, content: 'hello Dave' })
        .expect(201);
      const [next] = await dataSource.query(`SELECT recipient_user_id FROM message_recipients WHERE message_id = $1`, [again.body.id]);
      expect(next.recipient_user_id).toBe(dave.id);
      expect(impostorSocket.seen.filter((f) => f.type === 'message.created')).toEqual([]);
    });

    it('adding an address tells nothing about whether it has an account, nor any user id', async () => {
      const shape = async (email: string) => {
        const res = await request(urls[0]).post('/v1/contacts').set(bob.auth).send({ name: 'Probe', email }).expect(201);
        expect(JSON.stringify(res.body)).not.toMatch(/usr_/);
        const { id: _id, email: _email, created_at: _at, ...rest } = res.body;
        return rest;
      };
      expect(await shape('alice@example.com')).toEqual(await shape('nobody-here@example.com'));
    });

    it('a logged-out session loses its socket on the other instance at once', async () => {
      const second = await login(urls[0], idp, { sub: 'uid-alice', name: 'Alice', email: 'alice@example.com' });
      const socket = await GatewayClient.open(urls[0], second.token);
      sockets.push(socket);
      await request(urls[1]).post('/v1/auth/logout').set(second.auth).expect(204);
      expect((await socket.closed()).code).toBe(4401);
      // Alice's other session is untouched.
      await request(urls[1]).get('/v1/me').set(alice.auth).expect(200);
    });

    it('an install token acts for its own install only, and ends on every instance when the user uninstalls', async () => {
      await request(urls[0]).post('/v1/installs').set(alice.auth).send({ package_id: packageId }).expect(201);
      const bobInstall = (await request(urls[0]).post('/v1/installs').set(bob.auth).send({ package_id: packageId }).expect(201)).body.id;
      const aliceToken = await installTokenOf(alice);
      const refusedIds: string[] = [];
      for (const url of urls) {
        for (const body of [{ installId: bobInstall }, { userId: bob.id }]) {
          const res = await execute(url, bearer(aliceToken), body);
          refused(res, 403, 'insufficient_scope');
          refusedIds.push(res.headers['x-service-request-id']);
        }
      }
      // None of the refused calls reached the runtime (the worker's state polls of the new installs may, at any time).
      expect(refusedIds.every((id) => /^req_/.test(id))).toBe(true);
      expect(runtime.requests.filter((r) => refusedIds.includes(r.headers['x-service-request-id'] as string))).toEqual([]);
      const aliceInstall = (await request(urls[0]).get('/v1/installs').set(alice.auth).expect(200)).body.installs[0].id;
      await request(urls[1]).delete(`/v1/installs/${aliceInstall}`).set(alice.auth).expect(200);
      for (const url of urls) refused(await execute(url, bearer(aliceToken)), 401, 'invalid_token');
    });

    it('an app token loses a removed scope at once, and a rotation without grace ends it', async () => {
      const other = await registerApp(urls[0], developer, { name: 'Abused App' });
      const token = bearer(await appToken(urls[0], other));
      await request(urls[1])
        .put(`/v1/providers/apps/${other.id}/webhook`)
        .set(token)
        .send({ url: 'https://acme.example/hooks', event_types: ['*'] })
        .expect(201);
      await request(urls[0])
        .patch(`/v1/providers/apps/${other.id}`)
        .set(developer.auth)
        .send({ scopes: ['apps:read'] })
        .expect(200);
      for (const url of urls)
        refused(await request(url).post(`/v1/providers/apps/${other.id}/webhook/secret`).set(token), 403, 'insufficient_scope');
      await request(urls[0])
        .post(`/v1/providers/apps/${other.id}/secret`)
        .set(developer.auth)
        .send({ grace_period_seconds: 0 })
        .expect(200);
      for (const url of urls) refused(await request(url).get(`/v1/providers/apps/${other.id}`).set(token), 401, 'invalid_token');
    });

    it('an install cannot grant scopes the app does not hold', async () => {
      await request(urls[0])
        .patch(`/v1/providers/apps/${app.id}`)
        .set(developer.auth)
        .send({ scopes: ['capabilities:execute', 'packages:read'] })
        .expect(200);
      const carol = await login(urls[0], idp, { sub: 'uid-carol', email: 'carol@example.com' });
      const res = await request(urls[1])
        .post('/v1/installs')
        .set(carol.auth)
        .send({ package_id: packageId, scopes: ['capabilities:execute', 'installs:read'] });
      refused(res, 400, 'BAD_REQUEST');
    });

    it('malformed Basic credentials are a 401 invalid_client, and credentials are never cacheable', async () => {
      const res = await request(urls[0])
        .post('/v1/auth/token')
        .set('authorization', `Basic ${Buffer.from('a%zz:b%zz').toString('base64')}`)
        .type('form')
        .send({ grant_type: 'client_credentials' });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      const logins = [
        await request(urls[0])
          .post('/v1/auth/login')
          .send({ firebase_token: await idp.token({ sub: 'uid-cache' }) }),
        await request(urls[1]).post('/v1/providers/auth/login').send({ email: developer.email, password: DEVELOPER_PASSWORD }),
        await request(urls[0]).post(`/v1/providers/apps/${app.id}/secret`).set(developer.auth).send({ grace_period_seconds: 60 }),
      ];
      for (const answer of logins) {
        expect(answer.status).toBe(200);
        expect(answer.headers['cache-control']).toBe('no-store');
      }
    });
  });

  describe('developer login', () => {
    let env: TestEnvironment;
    afterEach(async () => {
      await env?.close();
    });

    it('30 concurrent guesses across two instances get at most 5 password checks, then the account is locked', async () => {
      env = await TestEnvironment.create({ SMTP_URL: smtp.url });
      const { urls } = await twoInstances(env);
      const victim = await onboardDeveloper(urls[0], smtp, 'victim@example.com');
      const guesses = Array.from({ length: 30 }, (_, i) => ({
        email: victim.email,
        password: i === 17 ? DEVELOPER_PASSWORD : `guess ${i} of many`,
      }));
      const counts = tally(
        await Promise.all(
          guesses.map((body, i) =>
            request(urls[i % 2])
              .post('/v1/providers/auth/login')
              .send(body),
          ),
        ),
      );
      expect((counts.invalid_credentials ?? 0) + (counts.token ?? 0)).toBeLessThanOrEqual(5);
      expect(counts.rate_limit_exceeded).toBeGreaterThanOrEqual(25);
      for (const url of urls) {
        refused(
          await request(url).post('/v1/providers/auth/login').send({ email: victim.email, password: DEVELOPER_PASSWORD }),
          429,
          'rate_limit_exceeded',
        );
      }
    });

    it('one TOTP code sent 30 times at once gives one token, and is refused when replayed', async () => {
      env = await TestEnvironment.create({ SMTP_URL: smtp.url });
      const { urls } = await twoInstances(env);
      const developer = await onboardDeveloper(urls[0], smtp, 'mfa-abuse@example.com');
      const enrol = await request(urls[0]).post('/v1/providers/account/mfa').set(developer.auth).expect(200);
      const confirmation = await freshTotp(enrol.body.secret);
      await request(urls[0]).post('/v1/providers/account/mfa/confirm').set(developer.auth).send({ code: confirmation.code }).expect(200);
      const { code } = await freshTotp(enrol.body.secret, { afterStep: confirmation.step, marginMs: 5_000 });
      const attempt = { email: developer.email, password: DEVELOPER_PASSWORD, totp: code };
      const counts = tally(
        await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            request(urls[i % 2])
              .post('/v1/providers/auth/login')
              .send(attempt),
          ),
        ),
      );
      expect(counts.token).toBe(1);
      const replay = await request(urls[1]).post('/v1/providers/auth/login').send(attempt);
      refused(replay, replay.status === 429 ? 429 : 401, replay.status === 429 ? 'rate_limit_exceeded' : 'mfa_required');
    }, 90_000);

    it('account creation answers a taken address exactly as a new one', async () => {
      env = await TestEnvironment.create({ SMTP_URL: smtp.url });
      const { urls } = await twoInstances(env);
      await onboardDeveloper(urls[0], smtp, 'taken@example.com');
      const answer = async (email: string) => {
        const res = await request(urls[1])
          .post('/v1/providers/account')
          .send({ company_name: 'Probe', email, password: 'a long enough password' });
        return { status: res.status, body: { ...res.body, email: undefined, message: String(res.body.message).replace(email, '<email>') } };
      };
      expect(await answer('taken@example.com')).toEqual(await answer('fresh@example.com'));
    });
  });

  describe('outbound addresses, with ALLOW_PRIVATE_TARGETS=false', () => {
    const dns = new ScriptedDns();
    let env: TestEnvironment;
    /** Private targets refused, as in production. */
    let strict: string;
    /** Private targets allowed: publishes packages whose runtimes listen on loopback. */
    let open: string;
    let appAuth: { authorization: string };
    let appId: string;
    let user: LoggedInUser;
    let rebound: ProviderRuntime;
    const capabilities = () => goodPackageCapabilities().filter((c) => (c as { type: string }).type !== 'action');
    const body = (slug: string, runtimeUrl: string) => ({
      appId,
      name: slug,
      slug,
      description: 'Balances',
      riskTier: 'data_only',
      runtimeUrl,
      capabilities: capabilities(),
    });
    const balance = (url: string, packageId: string) =>
      request(url)
        .post(`/v1/providers/packages/${packageId}/capabilities/balance/execute`)
        .set(user.auth)
        .send({ params: { account: 'checking' } });

    beforeAll(async () => {
      env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
      open = (await env.startApi({ imports: [dns.module()] })).url;
      strict = (await env.startApi({ env: { ALLOW_PRIVATE_TARGETS: 'false' }, imports: [dns.module()] })).url;
      await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' }, imports: [dns.module()] });
      const developer = await onboardDeveloper(open, smtp, 'outbound-abuse@example.com');
      const app = await registerApp(open, developer);
      appId = app.id;
      appAuth = bearer(await appToken(open, app));
      user = await login(open, idp, { sub: 'uid-outbound-abuse', email: 'outbound-abuse@example.com' });
      rebound = await ProviderRuntime.start({ certificate: certificateForHosts(['abuse.rebind.example']), capabilities: capabilities() });
    }, 60_000);
    afterAll(async () => {
      await env?.close();
      await rebound?.close();
    });

    it.each(['https://[::127.0.0.1]', 'https://[64:ff9b::7f00:1]', 'https://[2002:7f00:1::]'])(
      'refuses %s, an IPv6 spelling of 127.0.0.1, as a webhook, a webhook endpoint and a runtime URL',
      async (base) => {
        refused(
          await request(strict)
            .put(`/v1/providers/apps/${appId}/webhook`)
            .set(appAuth)
            .send({ url: `${base}/hooks` }),
          400,
        );
        refused(
          await request(strict)
            .post(`/v1/providers/apps/${appId}/webhook/endpoints`)
            .set(appAuth)
            .send({ url: `${base}/hooks` }),
          400,
        );
        refused(await request(strict).post('/v1/providers/packages').set(appAuth).send(body('embedded-v6', base)), 400);
      },
    );

    it('a runtime name that passes the check and then resolves to 127.0.0.1 is never connected to', async () => {
      const runtimeUrl = `https://abuse.rebind.example:${new URL(rebound.url).port}`;
      dns.answer('abuse.rebind.example', PUBLIC_ADDRESS);
      const created = await request(strict).post('/v1/providers/packages').set(appAuth).send(body('rebind-abuse', runtimeUrl)).expect(201);
      dns.answer('abuse.rebind.example', '127.0.0.1');
      await publishVersion(open, appAuth, created.body.id, created.body.versions[0].id);
      await request(open).post('/v1/installs').set(user.auth).send({ package_id: created.body.id }).expect(201);
      rebound.clearRequests();
      refused(await balance(strict, created.body.id), 502, 'runtime_unavailable');
      expect(rebound.requests).toEqual([]);
    });

    it('a new draft naming another runtime does not move the live traffic of the published version', async () => {
      const reviewed = await ProviderRuntime.start({ capabilities: capabilities() });
      const unreviewed = await ProviderRuntime.start({ capabilities: capabilities() });
      try {
        const { packageId } = await publishPackage(open, appAuth, body('reviewed-runtime', reviewed.url));
        await request(open).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201);
        await request(open)
          .post(`/v1/providers/packages/${packageId}/versions`)
          .set(appAuth)
          .send({ version: '1.1.0', capabilities: capabilities(), runtimeUrl: unreviewed.url })
          .expect(201);
        reviewed.clearRequests();
        await balance(open, packageId).expect(200);
        expect(reviewed.requestsTo('/capabilities/balance/execute')).toHaveLength(1);
        expect(unreviewed.requests).toEqual([]);
      } finally {
        await reviewed.close();
        await unreviewed.close();
      }
    });
  });
});
