import { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { launchBrowser, newPage, screenshot, seriousAxeViolations } from '../support/browser';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { raiseToEnterprise } from '../support/users';

type Descriptor = { name: string };
const capabilities = () => (goodPackageCapabilities() as Descriptor[]).filter((c) => ['balance', 'transfer'].includes(c.name));
const authExpired = { status: 401, body: { status: 'error', error: { code: 'AUTH_EXPIRED', message: 'token expired', retryable: true } } };

/**
 * The "Waiting for you" panel of /app: an action an app started for the user
 * appears live and is approved or declined with the keyboard alone; an
 * install whose runtime refuses its tokens asks to be re-authorized.
 */
describe('consumer app: what waits for the user', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let browser: Browser;
  let appAuth: { authorization: string };
  let packageId: string;
  let page: Page;
  let userAuth: { authorization: string };
  let userId: string;

  const startByApp = async (key: string, amount: number) =>
    request(url)
      .post(`/v1/providers/packages/${packageId}/capabilities/transfer/execute`)
      .set(appAuth)
      .send({ userId, idempotencyKey: key, input: { toAccount: 'DE89370400440532013000', amount, currency: 'EUR' } })
      .expect(202);

  /** Presses Tab until the focused element has this accessible label (at most 60 presses): reachable by keyboard. */
  async function tabTo(label: string): Promise<void> {
    for (let i = 0; i < 60; i += 1) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate<string | null>(
        "document.activeElement && (document.activeElement.getAttribute('aria-label') || document.activeElement.textContent)",
      );
      if (focused?.trim() === label) return;
    }
    throw new Error(`${label} is not reachable with Tab`);
  }

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start({ capabilities: capabilities() });
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env, RUNTIME_RETRY_BASE_MS: '20' });
    url = (await env.startApi()).url;
    // The worker dispatches the outbox (action.pending, install.updated); its poller ticks hourly so it takes no scripted answer.
    await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' } });
    const developer = await onboardDeveloper(url, smtp, 'waiting@example.com');
    const app = await registerApp(url, developer);
    appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    ({ packageId } = await publishPackage(url, appAuth, {
      appId: app.id,
      name: 'Acme Bank',
      slug: 'acme-bank-waiting',
      description: 'Balances and transfers',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      capabilities: capabilities(),
    }));
    browser = await launchBrowser();
    page = await newPage(browser, { baseURL: url });
    await page.goto('/app');
    await page
      .getByLabel('Identity provider token', { exact: true })
      .fill(await idp.token({ sub: 'uid-waiting', name: 'Ada', email: 'ada-waiting@example.com' }));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
    await page.getByText('Live', { exact: true }).waitFor();
    const session = await page.evaluate<{ token: string; user: { id: string } }>("JSON.parse(localStorage.getItem('soul.app.session'))");
    userAuth = { authorization: `Bearer ${session.token}` };
    userId = session.user.id;
    // The home page keeps fetching its surfaces while the (hourly) poller has filled nothing: stay clear of the Free tier's 60 a minute.
    await raiseToEnterprise(url, { id: userId });
    await request(url).post('/v1/installs').set(userAuth).send({ package_id: packageId }).expect(201);
  }, 90_000);

  afterAll(async () => {
    await page?.context().close();
    await browser?.close();
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  it('shows nothing while nothing waits', async () => {
    expect(await page.getByRole('region', { name: 'Waiting for you' }).count()).toBe(0);
  });

  it('shows an action an app started, live, and approves it with the keyboard: the runtime runs it once', async () => {
    runtime.clearRequests();
    // The user's own pending action (asked about in its widget's dialog) is not repeated in the panel.
    await request(url)
      .post(`/v1/providers/packages/${packageId}/capabilities/transfer/execute`)
      .set(userAuth)
      .send({ idempotencyKey: 'user-own-1', input: { toAccount: 'DE89370400440532013000', amount: 99, currency: 'EUR' } })
      .expect(202);
    await startByApp('browser-order-1', 12);
    const panel = page.getByRole('region', { name: 'Waiting for you' });
    await panel.getByRole('heading', { name: 'Acme Bank asks to: Transfer' }).waitFor();
    expect(await panel.getByRole('listitem').count()).toBe(1);
    await panel.getByText('12', { exact: true }).waitFor();
    expect(runtime.requestsTo('/capabilities/transfer/execute')).toHaveLength(0);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'app-waiting-for-you');

    await tabTo('Approve: Transfer (Acme Bank)');
    await page.keyboard.press('Enter');
    await panel.getByText('Transfer sent.').waitFor();
    expect(runtime.requestsTo('/capabilities/transfer/execute')).toHaveLength(1);
    // Focus stays in the panel, on its heading, once the button is gone.
    await page.waitForFunction("document.activeElement?.id === 'waiting-heading'", undefined, { timeout: 2_000 });
    const pending = await request(url).get('/v1/actions/pending').set(userAuth).expect(200);
    expect(pending.body.confirmations.map((c: { startedBy: string }) => c.startedBy)).toEqual(['user']);
  });

  it('declines an action with the keyboard: nothing reaches the runtime', async () => {
    runtime.clearRequests();
    await startByApp('browser-order-2', 7);
    const panel = page.getByRole('region', { name: 'Waiting for you' });
    await panel.getByRole('heading', { name: 'Acme Bank asks to: Transfer' }).waitFor();
    await tabTo('Decline: Transfer (Acme Bank)');
    await page.keyboard.press('Space');
    await panel.getByText('Transfer declined. Nothing was sent to Acme Bank.').waitFor();
    expect(runtime.requestsTo('/capabilities/transfer/execute')).toHaveLength(0);
    expect(await panel.getByRole('heading', { name: 'Acme Bank asks to: Transfer' }).count()).toBe(0);
  });

  it('drops an action decided in another session', async () => {
    const started = await startByApp('browser-order-3', 3);
    const panel = page.getByRole('region', { name: 'Waiting for you' });
    const item = panel.getByRole('heading', { name: 'Acme Bank asks to: Transfer' });
    await item.waitFor();
    await request(url).post(`/v1/actions/${started.body.confirmationId}/cancel`).set(userAuth).expect(200);
    await item.waitFor({ state: 'detached' });
  });

  it('asks to re-authorize an install whose runtime refused a fresh token, and re-authorizing clears it', async () => {
    runtime.scriptNext(authExpired, authExpired);
    const failed = await request(url)
      .post(`/v1/providers/packages/${packageId}/capabilities/balance/execute`)
      .set(userAuth)
      .send({ params: { account: 'checking' } });
    expect(JSON.stringify(failed.body)).toContain('reauthorization_required');
    const panel = page.getByRole('region', { name: 'Waiting for you' });
    const button = panel.getByRole('button', { name: 'Re-authorize Acme Bank' });
    await button.waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await tabTo('Re-authorize Acme Bank');
    await page.keyboard.press('Enter');
    await panel.getByText('Acme Bank is authorized again.').waitFor();
    const installs = await request(url).get('/v1/installs').set(userAuth).expect(200);
    expect(installs.body.installs[0]).toMatchObject({ package_id: packageId, reauthorization_required: false });
  });
});
