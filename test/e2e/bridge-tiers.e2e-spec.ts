import request from 'supertest';
import { TestIdentityProvider } from '../support/identity-provider';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { login, LoggedInUser } from '../support/users';

const problemType = (code: string) => `https://docs.example.com/developers/errors#${code}`;
const operator = { authorization: `Bearer ${OPERATOR_TOKEN}` };

/** The bank package with three realtime capabilities, one more than the Free tier's concurrent connections. */
function tierCapabilities(): unknown[] {
  const capabilities = goodPackageCapabilities() as Array<Record<string, unknown>>;
  const ticker = capabilities.find((c) => c.name === 'ticker')!;
  return [...capabilities, { ...ticker, name: 'ticker_second' }, { ...ticker, name: 'ticker_third' }];
}

/**
 * The runtime bridge applies the limits of the app's provider tier (spec:
 * Limits, provider platform), read at every call, so an operator moving an app
 * (`PATCH /v1/operator/apps/:app_id`) changes its limits at once.
 * `RUNTIME_TIMEOUT_MS` is Free's timeout; Pro's is 1.5 times it.
 */
describe('runtime bridge: limits follow the app’s tier', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let appId: string;
  let user: LoggedInUser;
  let packageId: string;

  const execute = (capability: string, body: Record<string, unknown> = {}) =>
    request(url).post(`/v1/providers/packages/${packageId}/capabilities/${capability}/execute`).set(user.auth).send(body);
  const setTier = async (tier: 'free' | 'pro' | 'enterprise') => {
    const res = await request(url).patch(`/v1/operator/apps/${appId}`).set(operator).send({ tier }).expect(200);
    expect(res.body.tier).toBe(tier);
  };

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start({ capabilities: tierCapabilities() });
    env = await TestEnvironment.create({
      SMTP_URL: smtp.url,
      ...idp.env,
      // Free 2 s, Pro 3 s, Enterprise 6 s: half a second either side of the slow runtime's 2.5 s. With 1 s and 1.2 s,
      // Pro's 300 ms of margin ran out once in a full CI run, where one test process has served every e2e file.
      RUNTIME_TIMEOUT_MS: '2000',
      RUNTIME_RETRY_BASE_MS: '20',
      RUNTIME_RETRY_BUDGET_MS: '5000',
    });
    url = (await env.startApi()).url;
    // Mail and outbox; its state poller and stream supervisor tick hourly, so nothing but the tests calls the runtime.
    await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' } });
    const developer = await onboardDeveloper(url, smtp, 'tiers@example.com');
    const app = await registerApp(url, developer);
    appId = app.id;
    const appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    user = await login(url, idp, { sub: 'uid-tiers', name: 'Tier User', email: 'tier-user@example.com' });
    ({ packageId } = await publishPackage(url, appAuth, {
      appId,
      name: 'Tiered Bank',
      slug: 'tiered-bank',
      description: 'Balances, transfers and live tickers',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      capabilities: tierCapabilities(),
    }));
    await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201);
  }, 60_000);

  afterAll(async () => {
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  afterEach(async () => {
    await runtime.behave('conforming');
    await setTier('free');
  });

  it('refuses a 300 KB answer for a Free app (256 KB cap) and passes it on once the operator moves the app to Pro (1 MB cap)', async () => {
    await runtime.behave('oversized');
    const refused = await execute('balance', { params: { account: 'checking' } }).expect(500);
    expect(refused.body).toMatchObject({ type: problemType('execution_failed'), detail: expect.stringMatching(/bytes/) });

    await setTier('pro');
    const accepted = await execute('balance', { params: { account: 'checking' } }).expect(200);
    expect(accepted.body).toMatchObject({ status: 'ok', cached: false, data: { available: 1520.75, currency: 'EUR' } });
    expect((accepted.body.metadata as { trace: string }).trace).toHaveLength(300 * 1024);
  });

  it('times out a runtime answering after 2.5 s for a Free app (2 s) and waits for it on Pro (3 s)', async () => {
    runtime.slowDelayMs = 2_500;
    await runtime.behave('slow');
    const params = { params: { account: 'checking', limit: 2 } };
    const timedOut = await execute('transactions', params).expect(504);
    expect(timedOut.body).toMatchObject({ type: problemType('capability_timeout'), detail: expect.stringContaining('within 2 s') });

    await setTier('pro');
    const answered = await execute('transactions', params).expect(200);
    expect(answered.body).toMatchObject({ status: 'ok', cursor: { hasMore: true } });
    expect(answered.body.items).toHaveLength(2);
  });

  it('allows a Free app 2 concurrent realtime connections per user, and 10 on Pro', async () => {
    await execute('ticker', { params: { pair: 'EURUSD' } }).expect(202);
    await execute('ticker_second', { params: { pair: 'EURUSD' } }).expect(202);
    const refused = await execute('ticker_third', { params: { pair: 'EURUSD' } }).expect(429);
    expect(refused.body).toMatchObject({ type: problemType('rate_limit_exceeded'), detail: expect.stringContaining('At most 2 ') });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);

    await setTier('pro');
    const subscribed = await execute('ticker_third', { params: { pair: 'EURUSD' } }).expect(202);
    expect(subscribed.body).toMatchObject({ status: 'subscribed', capability: 'ticker_third' });
  });

  it('stops a Free app at 20 action executions per minute and lets the same minute go on once it is Pro (200)', async () => {
    const transfer = (i: number) => execute('transfer', { input: { toAccount: 'DE89370400440532013000', amount: i + 1, currency: 'EUR' } });
    for (let i = 0; i < 20; i += 1) await transfer(i).expect(202);
    const refused = await transfer(20).expect(429);
    expect(refused.body).toMatchObject({
      type: problemType('rate_limit_exceeded'),
      detail: expect.stringContaining('More than 20 action executions per minute of transfer'),
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);

    // The count of this minute carries over (21 used), measured against Pro's 200.
    await setTier('pro');
    await transfer(21).expect(202);
  });
});
