import request from 'supertest';
import { TestIdentityProvider } from '../support/identity-provider';
import { TestEnvironment } from '../support/harness';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { login } from '../support/users';
import { waitFor } from '../support/wait-for';
import { subscribeWebhook } from '../support/webhook-profiles';
import { WebhookReceiver } from '../support/webhook-receiver';

type Delivery = { id: string; event_type: string; package_id: string | null; test: boolean; status: string; replay_of: string | null };

/**
 * The delivery log names the package each delivery concerns (issue 24):
 * `package_id` on every delivery, taken at fan-out from the event (package.*
 * and install.* name it in their data, capability.* through the install's
 * package), null for a test event; `?package_id=` filters the log; a replay
 * keeps it.
 */
describe('webhook deliveries name the package they concern', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let receiver: WebhookReceiver;
  let url: string;
  let auth: { authorization: string };
  let appId: string;
  let packageId: string;

  const hook = (path = '') => `/v1/providers/apps/${appId}/webhook${path}`;
  const list = async (query: Record<string, string> = {}): Promise<Delivery[]> =>
    (await request(url).get(hook('/deliveries')).query(query).set(auth).expect(200)).body.deliveries;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    receiver = await WebhookReceiver.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env, WEBHOOK_RETRY_BASE_MS: '1' });
    url = (await env.startApi()).url;
    await env.startWorker();
    const developer = await onboardDeveloper(url, smtp, 'delivery-package@example.com');
    const app = await registerApp(url, developer, { webhook_url: receiver.url });
    appId = app.id;
    auth = { authorization: `Bearer ${await appToken(url, app)}` };
    await subscribeWebhook(url, app, auth, { event_types: ['*'] });
    ({ packageId } = await publishPackage(url, auth, {
      appId,
      name: 'Ledger',
      slug: 'ledger',
      description: 'Balances',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      capabilities: goodPackageCapabilities(),
    }));
    const user = await login(url, idp, { sub: 'uid-delivery-package', name: 'Del Ivery', email: 'delivery-package@example.com' });
    await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201);
    await request(url)
      .post(`/v1/providers/packages/${packageId}/capabilities/balance/execute`)
      .set(user.auth)
      .send({ params: { account: 'checking' } })
      .expect(200);
    await request(url).post(hook('/test')).set(auth).send({ type: 'install.created' }).expect(202);
  }, 90_000);

  afterAll(async () => {
    await env?.close();
    await receiver?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  it('sets package_id on package, install and capability deliveries, and null on a test event', async () => {
    const deliveries = await waitFor(
      async () => {
        const rows = await list();
        const types = new Set(rows.map((d) => d.event_type));
        return ['package.submitted', 'package.published', 'install.created', 'capability.invoked'].every((t) => types.has(t))
          ? rows
          : undefined;
      },
      { what: 'the deliveries of the package’s events', timeoutMs: 20_000 },
    );
    const real = deliveries.filter((d) => !d.test);
    expect(real.length).toBeGreaterThanOrEqual(4);
    for (const delivery of real)
      expect({ type: delivery.event_type, package_id: delivery.package_id }).toEqual({
        type: delivery.event_type,
        package_id: packageId,
      });
    const tests = deliveries.filter((d) => d.test);
    expect(tests).toHaveLength(1);
    expect(tests[0].package_id).toBeNull();

    const invoked = real.find((d) => d.event_type === 'capability.invoked')!;
    const detail = await request(url)
      .get(hook(`/deliveries/${invoked.id}`))
      .set(auth)
      .expect(200);
    expect(detail.body.package_id).toBe(packageId);
    // The signed body is unchanged: capability events name the install, as the spec lists, and no package.
    expect(detail.body.payload.data).not.toHaveProperty('package_id');
  });

  it('filters the log by ?package_id=', async () => {
    const all = await list();
    const mine = await list({ package_id: packageId });
    expect(mine.map((d) => d.id).sort()).toEqual(
      all
        .filter((d) => d.package_id === packageId)
        .map((d) => d.id)
        .sort(),
    );
    expect(mine.some((d) => d.test)).toBe(false);
    expect(await list({ package_id: 'pkg_0000000000000000000000' })).toEqual([]);
    // Combines with the other filters.
    const installs = await list({ package_id: packageId, event_type: 'install.created' });
    expect(installs.map((d) => d.event_type)).toEqual(['install.created']);
  });

  it('refuses a package_id that is not a package id with a problem naming the field', async () => {
    const res = await request(url).get(hook('/deliveries')).query({ package_id: 'not-a-package' }).set(auth).expect(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.body).toMatchObject({ status: 400, field: 'package_id' });
  });

  it('keeps the package on a replay', async () => {
    const published = (await list({ event_type: 'package.published' }))[0];
    await waitFor(
      async () =>
        (
          await request(url)
            .get(hook(`/deliveries/${published.id}`))
            .set(auth)
            .expect(200)
        ).body.status !== 'pending' || undefined,
      { what: 'the published delivery to settle', timeoutMs: 15_000 },
    );
    const replay = await request(url)
      .post(hook(`/deliveries/${published.id}/replay`))
      .set(auth)
      .expect(202);
    expect(replay.body).toMatchObject({ replay_of: published.id, package_id: packageId });
  });
});
