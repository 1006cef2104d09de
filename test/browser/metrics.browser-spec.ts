import { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { launchBrowser, newPage, screenshot, seriousAxeViolations } from '../support/browser';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, DEVELOPER_PASSWORD, onboardDeveloper, OnboardedDeveloper, publishPackage, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { login } from '../support/users';
import { waitFor } from '../support/wait-for';
import { CapabilityMetrics } from '../../src/modules/runtime-bridge/capability-metrics.service';

const envelope = (code: string, message: string, retryable: boolean) => ({ status: 'error', error: { code, message, retryable } });

/**
 * The console's metrics page in headless Chromium, against the real api, worker and an HTTPS provider runtime:
 * after real calls (three that succeed, one the runtime refuses), the page draws a capability's calls and latency
 * as SVG charts whose text alternative holds the numbers, switches windows by keyboard, and passes axe.
 */
describe('developer console: metrics per capability', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let browser: Browser;
  let page: Page;
  let developer: OnboardedDeveloper;

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env, RUNTIME_RETRY_BASE_MS: '20' });
    const api = await env.startApi();
    url = api.url;
    await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' } });
    developer = await onboardDeveloper(url, smtp, 'metrics-dev@example.com');
    const app = await registerApp(url, developer);
    const appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    const { packageId } = await publishPackage(url, appAuth, {
      appId: app.id,
      name: 'Acme Bank',
      slug: 'acme-bank-console-metrics',
      description: 'Balances and transfers',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      capabilities: goodPackageCapabilities(),
    });
    const user = await login(url, idp, { sub: 'uid-console-metrics', name: 'Metrics User', email: 'console-metrics@example.com' });
    await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201);
    const transactions = () =>
      request(url)
        .post(`/v1/providers/packages/${packageId}/capabilities/transactions/execute`)
        .set(user.auth)
        .send({ params: { account: 'checking' } });
    for (let i = 0; i < 3; i += 1) await transactions().expect(200);
    runtime.scriptNext({ status: 403, body: envelope('PERMISSION_DENIED', 'no access to that account', false) });
    await transactions().expect(403);
    // Reads are traced after their answer; then the rollup the worker runs every minute, at once.
    const metrics = api.app.get(CapabilityMetrics);
    await waitFor(
      async () => {
        await metrics.rollup();
        const res = await request(url)
          .get(`/v1/providers/packages/${packageId}/metrics?window=1h&capability=transactions`)
          .set(developer.auth);
        return res.body.capabilities?.[0]?.calls === 4 || undefined;
      },
      { what: 'four calls counted' },
    );

    browser = await launchBrowser();
    page = await newPage(browser, { baseURL: url });
    await page.goto('/console/login');
    await page.getByLabel('Email', { exact: true }).fill(developer.email);
    await page.getByLabel('Password', { exact: true }).fill(DEVELOPER_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await heading('Overview').waitFor();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  const heading = (name: string | RegExp, level = 1) => page.getByRole('heading', { name, level });
  const card = () => page.getByRole('region', { name: 'transactions' });

  it('draws calls and latency of each capability, with the numbers in text', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Metrics' }).click();
    await heading('Metrics').waitFor();
    expect(await page.getByLabel('Package', { exact: true }).inputValue()).toMatch(/^pkg_/);
    expect(await page.getByRole('radio', { name: 'Last 24 hours' }).isChecked()).toBe(true);
    await card().waitFor();
    const figures = card().locator('dl.metrics-figures');
    expect(await figures.getByText('Calls', { exact: true }).locator('xpath=following-sibling::dd').textContent()).toBe('4');
    expect(await figures.getByText('Error rate').locator('xpath=following-sibling::dd').textContent()).toBe('25.0 %');
    expect(await figures.getByText('p95 latency').locator('xpath=following-sibling::dd').textContent()).toMatch(/^\d+(\.\d)? ms$/);
    const codes = card().getByRole('table', { name: 'Errors by code' });
    expect(await codes.locator('tbody tr').first().textContent()).toContain('PERMISSION_DENIED');

    // The charts are images whose accessible name carries their summary.
    const calls = card().getByRole('img', { name: /Calls.*4 in all, 1 failed/ });
    await calls.waitFor();
    expect(await calls.locator('rect.bar-calls').count()).toBeGreaterThanOrEqual(1);
    expect(await calls.locator('rect.bar-errors').count()).toBe(1);
    const latency = card().getByRole('img', { name: /Latency.*p50 \d+(\.\d)? ms and p95/ });
    expect(await latency.locator('polyline, circle').count()).toBeGreaterThanOrEqual(2);
    await screenshot(page, 'console-metrics');
    expect(await seriousAxeViolations(page)).toEqual([]);
  });

  it('switches the window and opens the charts’ data table with the keyboard alone', async () => {
    await page.getByRole('radio', { name: 'Last 24 hours' }).focus();
    await page.keyboard.press('ArrowUp'); // the previous choice of the group: the last hour
    await waitFor(async () => (await page.getByRole('radio', { name: 'Last hour' }).isChecked()) || undefined, { what: 'the hour window' });
    await waitFor(async () => new URL(page.url()).searchParams.get('window') === '1h' || undefined, { what: 'the window in the address' });
    await card().waitFor();

    const summary = card().getByText('Data of the charts, per minute');
    await summary.focus();
    await page.keyboard.press('Enter');
    const table = card().getByRole('table', { name: 'Calls and latency of transactions per bucket' });
    await table.waitFor();
    const cells = await Promise.all((await table.locator('tbody tr').all()).map((row) => row.locator('td').allTextContents()));
    expect(cells.reduce((sum, row) => sum + Number(row[1]), 0)).toBe(4);
    expect(cells.reduce((sum, row) => sum + Number(row[2]), 0)).toBe(1);
    expect(await seriousAxeViolations(page)).toEqual([]);
  });

  it('shows the webhook delivery success of the package’s app per endpoint', async () => {
    const section = page.getByRole('region', { name: 'Webhook deliveries of this package’s app' });
    const row = section.getByRole('table', { name: 'Webhook delivery success per endpoint' }).locator('tbody tr').first();
    expect(await row.textContent()).toMatch(/whe_\w+ \(primary\)/);
  });
});
