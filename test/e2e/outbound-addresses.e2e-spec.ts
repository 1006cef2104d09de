import Redis from 'ioredis';
import request from 'supertest';
import { TestIdentityProvider } from '../support/identity-provider';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, OnboardedDeveloper, publishPackage, publishVersion, registerApp } from '../support/providers';
import { PUBLIC_ADDRESS, ScriptedDns } from '../support/scripted-dns';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted, certificateForHosts } from '../support/test-ca';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';

const PUBLIC = PUBLIC_ADDRESS;
const LOOPBACK = '127.0.0.1';
const dns = new ScriptedDns();
const ScriptedDnsModule = dns.module();

/** IPv6 spellings of 127.0.0.1: IPv4-compatible, NAT64 (64:ff9b::/96) and 6to4 (2002::/16). */
const EMBEDDED_LOOPBACK = ['https://[::127.0.0.1]', 'https://[64:ff9b::7f00:1]', 'https://[2002:7f00:1::]'];

const problem = (code: string) => expect.stringMatching(new RegExp(`#${code}$`));

/**
 * Where the service is willing to connect: addresses that embed an internal
 * IPv4 address, host names that re-resolve to one between the check and the
 * call, and which runtime a package's live traffic goes to.
 */
describe('outbound addresses', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let redis: Redis;
  /** ALLOW_PRIVATE_TARGETS=true: the local runtimes are callable (publishing, control calls). */
  let open: string;
  /** ALLOW_PRIVATE_TARGETS=false, as in production. */
  let strict: string;
  let developer: OnboardedDeveloper;
  let appId: string;
  let appAuth: { authorization: string };
  let user: LoggedInUser;
  /** The package whose runtime host re-resolves to 127.0.0.1, and the user's install of it (published through `open`). */
  let rebound: ProviderRuntime;
  let rebindingPackageId: string;
  let rebindingInstallId: string;

  const capabilities = goodPackageCapabilities();
  const packageBody = (slug: string, runtimeUrl: string) => ({
    appId,
    name: `Bank ${slug}`,
    slug,
    description: 'Balances and transfers',
    riskTier: 'action_capable',
    runtimeUrl,
    capabilities,
  });
  const execute = (api: string, packageId: string) =>
    request(api)
      .post(`/v1/providers/packages/${packageId}/capabilities/balance/execute`)
      .set(user.auth)
      .send({ params: { account: 'checking' } });
  const install = async (packageId: string) =>
    (await request(open).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201)).body.id as string;
  const forgetState = (installId: string) => redis.del(`${env.env.REDIS_PREFIX}:state:${installId}:balance`);

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env, RUNTIME_TIMEOUT_MS: '3000' });
    open = (await env.startApi({ imports: [ScriptedDnsModule] })).url;
    strict = (await env.startApi({ env: { ALLOW_PRIVATE_TARGETS: 'false' }, imports: [ScriptedDnsModule] })).url;
    // Mail (the developer's verification link) goes out through the worker; its pollers tick hourly, so no call here is theirs.
    await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' }, imports: [ScriptedDnsModule] });
    redis = new Redis(env.env.REDIS_URL);
    developer = await onboardDeveloper(open, smtp, 'outbound@example.com');
    const app = await registerApp(open, developer);
    appId = app.id;
    appAuth = { authorization: `Bearer ${await appToken(open, app)}` };
    user = await login(open, idp, { sub: 'uid-outbound', name: 'Outbound User', email: 'outbound-user@example.com' });
  }, 60_000);

  afterAll(async () => {
    redis?.disconnect();
    await env?.close();
    await rebound?.close();
    await idp?.close();
    await smtp?.close();
  });

  describe('IPv6 addresses that embed a loopback IPv4 address, with ALLOW_PRIVATE_TARGETS=false', () => {
    it.each(EMBEDDED_LOOPBACK)('refuses %s as a webhook URL when an app is created and when its webhook is set', async (base) => {
      const created = await request(strict)
        .post('/v1/providers/apps')
        .set(developer.auth)
        .send({ name: 'Probe', description: 'x', redirect_uris: ['https://acme.example/cb'], webhook_url: `${base}/hooks` })
        .expect(400);
      expect(created.body).toMatchObject({ type: problem('invalid_format'), field: 'webhook_url' });

      const put = await request(strict)
        .put(`/v1/providers/apps/${appId}/webhook`)
        .set(appAuth)
        .send({ url: `${base}/hooks` })
        .expect(400);
      expect(put.body).toMatchObject({ type: problem('invalid_format'), field: 'webhook_url' });
    });

    it.each(EMBEDDED_LOOPBACK)('refuses %s as a runtimeUrl of a new package and of a new version', async (base) => {
      const slug = `embedded-${EMBEDDED_LOOPBACK.indexOf(base)}`;
      const created = await request(strict).post('/v1/providers/packages').set(appAuth).send(packageBody(slug, base)).expect(400);
      expect(created.body).toMatchObject({ type: problem('invalid_format'), field: 'runtimeUrl' });

      dns.answer('runtime.acme.example', PUBLIC);
      const pkg = await request(strict)
        .post('/v1/providers/packages')
        .set(appAuth)
        .send(packageBody(`${slug}-ok`, 'https://runtime.acme.example'))
        .expect(201);
      const version = await request(strict)
        .post(`/v1/providers/packages/${pkg.body.id}/versions`)
        .set(appAuth)
        .send({ version: '1.1.0', capabilities, runtimeUrl: base })
        .expect(400);
      expect(version.body).toMatchObject({ type: problem('invalid_format'), field: 'runtimeUrl' });
    });
  });

  describe('a runtime host name that re-resolves to an internal address after the check (DNS rebinding)', () => {
    let port: string;

    beforeAll(async () => {
      rebound = await ProviderRuntime.start({
        certificate: certificateForHosts(['state.rebind.example', 'conformance.rebind.example']),
        capabilities,
      });
      port = new URL(rebound.url).port;
    });

    it('fails a state call through the bridge as runtime_unavailable (502) without reaching the internal host', async () => {
      const runtimeUrl = `https://state.rebind.example:${port}`;
      // Registration: the name resolves to a public address, so the package is accepted.
      dns.answer('state.rebind.example', PUBLIC);
      const created = await request(strict)
        .post('/v1/providers/packages')
        .set(appAuth)
        .send(packageBody('rebind-state', runtimeUrl))
        .expect(201);
      expect(created.body.runtimeUrl).toBe(runtimeUrl);
      // Then the name answers 127.0.0.1, where the local runtime listens (the open API publishes through it).
      dns.answer('state.rebind.example', LOOPBACK);
      await publishVersion(open, appAuth, created.body.id, created.body.versions[0].id);
      const installId = await install(created.body.id);
      [rebindingPackageId, rebindingInstallId] = [created.body.id, installId];

      rebound.clearRequests();
      dns.asked.length = 0;
      const res = await execute(strict, created.body.id).expect(502);
      expect(res.body).toMatchObject({ type: problem('runtime_unavailable') });
      expect(res.body.detail).toContain('resolves to a loopback, private or link-local address');
      expect(dns.asked).toContain('state.rebind.example'); // refused at connect time, on the connected address
      expect(rebound.requests).toEqual([]);
      expect(JSON.stringify(res.body)).not.toContain('1520.75'); // nothing of the internal answer is relayed

      // Control: the same call with private targets allowed reaches the runtime, with TLS verified for the host name.
      await forgetState(installId);
      const allowed = await execute(open, created.body.id).expect(200);
      expect(allowed.body.data).toEqual({ available: 1520.75, currency: 'EUR' });
      expect(rebound.requestsTo('/capabilities/balance/execute')).toHaveLength(1);
    });

    it('fails a conformance run whose host passes the check at the start and answers 127.0.0.1 when connected', async () => {
      const runtimeUrl = `https://conformance.rebind.example:${port}`;
      dns.answer('conformance.rebind.example', PUBLIC);
      const created = await request(strict)
        .post('/v1/providers/packages')
        .set(appAuth)
        .send(packageBody('rebind-conformance', runtimeUrl))
        .expect(201);

      rebound.clearRequests();
      // The run's own check at the start sees the public address; the connections then get 127.0.0.1.
      dns.answer('conformance.rebind.example', PUBLIC, LOOPBACK);
      const submitted = await request(strict)
        .post(`/v1/providers/packages/manage/${created.body.id}/versions/${created.body.versions[0].id}/submit`)
        .set(appAuth)
        .expect(400);
      expect(submitted.body).toMatchObject({ type: problem('conformance_failed') });
      expect(submitted.body.score).toBeLessThan(80);
      expect(JSON.stringify(submitted.body.dimensions)).toContain(
        'runtime_unavailable: not called, conformance.rebind.example resolves to a loopback, private or link-local address',
      );
      expect(rebound.requests).toEqual([]);
    });
  });

  describe('the runtime URL belongs to the version that was reviewed', () => {
    let reviewed: ProviderRuntime;
    let next: ProviderRuntime;

    beforeAll(async () => {
      reviewed = await ProviderRuntime.start({ capabilities });
      next = await ProviderRuntime.start({ capabilities });
    });
    afterAll(async () => {
      await reviewed?.close();
      await next?.close();
    });

    it('keeps live traffic on the published version’s runtime while a newer draft names another, and moves it on publication', async () => {
      const { packageId, versionId } = await publishPackage(open, appAuth, packageBody('version-runtime', reviewed.url));
      const installId = await install(packageId);

      const draft = await request(open)
        .post(`/v1/providers/packages/${packageId}/versions`)
        .set(appAuth)
        .send({ version: '1.1.0', capabilities, runtimeUrl: next.url })
        .expect(201);
      expect(draft.body).toMatchObject({ version: '1.1.0', state: 'draft', runtimeUrl: next.url });

      reviewed.clearRequests();
      next.clearRequests();
      await forgetState(installId);
      await execute(open, packageId).expect(200);
      expect(reviewed.requestsTo('/capabilities/balance/execute')).toHaveLength(1);
      expect(next.requests).toEqual([]);

      const read = await request(open).get(`/v1/providers/packages/${packageId}`).set(appAuth).expect(200);
      expect(read.body.runtimeUrl).toBe(reviewed.url);
      expect(read.body.versions).toEqual([
        expect.objectContaining({ id: draft.body.id, runtimeUrl: next.url }),
        expect.objectContaining({ id: versionId, runtimeUrl: reviewed.url }),
      ]);

      // Conformance of the draft calls the draft's own runtime; review happens against it.
      reviewed.clearRequests();
      const submitted = await request(open)
        .post(`/v1/providers/packages/manage/${packageId}/versions/${draft.body.id}/submit`)
        .set(appAuth)
        .expect(200);
      expect(next.requestsTo('/capabilities/balance/execute').length).toBeGreaterThan(0);
      expect(reviewed.requests).toEqual([]);
      const queue = await request(open)
        .get('/v1/operator/reviews')
        .set({ authorization: `Bearer ${OPERATOR_TOKEN}` })
        .expect(200);
      expect(queue.body.reviews).toContainEqual(expect.objectContaining({ id: draft.body.id, runtimeUrl: next.url }));
      expect(submitted.body.review).toBe('manual');
      await request(open)
        .post(`/v1/operator/packages/${packageId}/versions/${draft.body.id}/approve`)
        .set({ authorization: `Bearer ${OPERATOR_TOKEN}` })
        .expect(200);

      // Approved but not yet published: still the reviewed runtime.
      next.clearRequests();
      await forgetState(installId);
      await execute(open, packageId).expect(200);
      expect(reviewed.requestsTo('/capabilities/balance/execute')).toHaveLength(1);
      expect(next.requests).toEqual([]);

      await request(open).post(`/v1/providers/packages/manage/${packageId}/versions/${draft.body.id}/publish`).set(appAuth).expect(200);
      reviewed.clearRequests();
      await forgetState(installId);
      await execute(open, packageId).expect(200);
      expect(next.requestsTo('/capabilities/balance/execute')).toHaveLength(1);
      expect(reviewed.requests).toEqual([]);
      expect((await request(open).get(`/v1/providers/packages/${packageId}`).set(appAuth).expect(200)).body.runtimeUrl).toBe(next.url);

      // A version that names no runtime keeps the newest version's.
      const inherited = await request(open)
        .post(`/v1/providers/packages/${packageId}/versions`)
        .set(appAuth)
        .send({ version: '1.2.0', capabilities })
        .expect(201);
      expect(inherited.body.runtimeUrl).toBe(next.url);
    });
  });

  // Last: its worker runs with private targets refused until the end of the file.
  describe('a realtime stream to a host that re-resolves to an internal address', () => {
    it('is never opened: every (re)connect is refused on the connected address', async () => {
      await env.startWorker({
        env: { ALLOW_PRIVATE_TARGETS: 'false', RUNTIME_TICK_MS: '250', REALTIME_RECONNECT_BASE_MS: '100' },
        imports: [ScriptedDnsModule],
      });
      rebound.clearRequests();
      dns.asked.length = 0;
      await request(open)
        .post(`/v1/providers/packages/${rebindingPackageId}/capabilities/ticker/execute`)
        .set(user.auth)
        .send({})
        .expect(202);
      const key = `${env.env.REDIS_PREFIX}:realtime:status:${rebindingInstallId}:ticker`;
      const status = async () => JSON.parse((await redis.get(key)) ?? 'null') as { state: string; connects: number } | null;
      // Done when the stream opened (the attack worked) or after a few attempts, each refused at connect time.
      await waitFor(
        async () => {
          const now = await status();
          return (now?.connects ?? 0) > 0 || (now !== null && dns.asked.filter((h) => h === 'state.rebind.example').length >= 3);
        },
        { what: 'stream connection attempts' },
      );
      expect(await status()).toMatchObject({ state: 'reconnecting', connects: 0 });
      expect(rebound.requestsTo('/capabilities/ticker/stream')).toEqual([]);
    });
  });
});
