import request from 'supertest';
import { TestIdentityProvider } from '../support/identity-provider';
import { TestEnvironment } from '../support/harness';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, OnboardedDeveloper, publishPackage, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { login } from '../support/users';

/**
 * The package detail's `installCount` (issue 24, "A console that guides"): the active installs of the
 * package, counted for its own developer and app only; the list does not carry it.
 */
describe('provider platform: install count on the package detail', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let developer: OnboardedDeveloper;
  let appAuth: { authorization: string };
  let packageId: string;

  const detail = (auth: { authorization: string }) => request(url).get(`/v1/providers/packages/${packageId}`).set(auth);

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
    url = (await env.startApi()).url;
    await env.startWorker();
    developer = await onboardDeveloper(url, smtp, 'installs-dev@example.com');
    const app = await registerApp(url, developer);
    appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    ({ packageId } = await publishPackage(url, appAuth, {
      appId: app.id,
      name: 'Counted Bank',
      slug: 'counted-bank',
      description: 'A package whose installs are counted',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      capabilities: goodPackageCapabilities(),
    }));
  }, 90_000);

  afterAll(async () => {
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  it('counts active installs, for the developer and the app token alike, and drops removed ones', async () => {
    expect((await detail(developer.auth).expect(200)).body.installCount).toBe(0);

    const first = await login(url, idp, { sub: 'uid-count-1', email: 'count-1@example.com' });
    const second = await login(url, idp, { sub: 'uid-count-2', email: 'count-2@example.com' });
    const firstInstall = (await request(url).post('/v1/installs').set(first.auth).send({ package_id: packageId }).expect(201)).body.id;
    await request(url).post('/v1/installs').set(second.auth).send({ package_id: packageId }).expect(201);
    // Installing again is the same install, not a second one.
    await request(url).post('/v1/installs').set(first.auth).send({ package_id: packageId });

    expect((await detail(developer.auth).expect(200)).body.installCount).toBe(2);
    expect((await detail(appAuth).expect(200)).body.installCount).toBe(2);

    await request(url).delete(`/v1/installs/${firstInstall}`).set(first.auth).expect(200);
    expect((await detail(developer.auth).expect(200)).body.installCount).toBe(1);

    // The list stays as it was: the count is on the detail only.
    const list = await request(url).get('/v1/providers/packages').set(developer.auth).expect(200);
    expect(list.body.packages[0]).not.toHaveProperty('installCount');
  });

  it('does not tell another developer how many installs a package has', async () => {
    const stranger = await onboardDeveloper(url, smtp, 'installs-stranger@example.com');
    const res = await detail(stranger.auth).expect(403);
    expect(res.body).not.toHaveProperty('installCount');
    expect(res.body.type).toMatch(/#insufficient_scope$/);
  });
});
