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

const envelope = (code: string, message: string, retryable: boolean) => ({ status: 'error', error: { code, message, retryable } });

/**
 * The console's execution log in headless Chromium, against the real api,
 * worker and an HTTPS provider runtime: a provider finds a user's failed call
 * by the request id their runtime logged, by keyboard, and sees its phases.
 */
describe('developer console: execution log', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let browser: Browser;
  let page: Page;
  let developer: OnboardedDeveloper;
  let okId = '';
  let failedId = '';
  /** Makes `n` more state calls (each traced), and waits until the log holds `total` calls. */
  let moreCalls: (n: number, total: number) => Promise<void>;

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env, RUNTIME_RETRY_BASE_MS: '20' });
    url = (await env.startApi()).url;
    await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' } });
    developer = await onboardDeveloper(url, smtp, 'executions-dev@example.com');
    const app = await registerApp(url, developer);
    const appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    const { packageId } = await publishPackage(url, appAuth, {
      appId: app.id,
      name: 'Acme Bank',
      slug: 'acme-bank-console-log',
      description: 'Balances and transfers',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      capabilities: goodPackageCapabilities(),
    });
    const user = await login(url, idp, { sub: 'uid-console-log', name: 'Log User', email: 'console-log@example.com' });
    await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201);
    const execute = (capability: string, body: Record<string, unknown>) =>
      request(url).post(`/v1/providers/packages/${packageId}/capabilities/${capability}/execute`).set(user.auth).send(body);

    // Conformance called the runtime while the package was published: only these calls count below.
    runtime.clearRequests();
    okId = (await execute('balance', { params: { account: 'checking' } }).expect(200)).body.requestId;
    const pending = await execute('transfer', { input: { toAccount: 'DE89370400440532013000', amount: 5, currency: 'EUR' } }).expect(202);
    runtime.scriptNext({ status: 409, body: envelope('CONFLICT', 'transfer already booked', false) });
    await request(url).post(`/v1/actions/${pending.body.confirmationId}/confirm`).set(user.auth).expect(409);
    // What the provider's runtime logged: the request id it received.
    failedId = runtime.requestsTo('/capabilities/transfer/execute')[0].headers['x-service-request-id'] as string;
    await waitFor(async () => (await request(url).get(`/v1/providers/executions/${okId}`).set(developer.auth)).status === 200, {
      what: 'the state call trace',
    });

    moreCalls = async (n, total) => {
      for (let i = 0; i < n; i += 1) await execute('balance', { params: { account: 'checking' } }).expect(200);
      await waitFor(
        async () =>
          (await request(url).get('/v1/providers/executions').query({ limit: 100 }).set(developer.auth)).body.executions.length === total ||
          undefined,
        { what: `${total} traced calls` },
      );
    };

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
  const logRows = () => page.getByRole('table', { name: 'Capability executions, newest first' }).locator('tbody tr');

  it('lists the calls newest first and filters them by outcome with the keyboard alone', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Executions' }).click();
    await heading('Executions').waitFor();
    await waitFor(async () => (await logRows().count()) === 3 || undefined, { what: 'three calls in the log' });
    // Newest first: the failed confirmation, its pending request, the state call.
    expect(await logRows().first().getByRole('link').textContent()).toBe(failedId);
    expect(await logRows().last().getByRole('link').textContent()).toBe(okId);
    await screenshot(page, 'console-executions');
    expect(await seriousAxeViolations(page)).toEqual([]);

    await page.getByLabel('Outcome', { exact: true }).focus();
    await page.keyboard.press('End'); // the last choice: failed
    expect(await page.getByLabel('Outcome', { exact: true }).inputValue()).toBe('failed');
    await page.getByLabel('Error code', { exact: true }).focus();
    await page.keyboard.type('CONFLICT');
    await page.keyboard.press('Enter');
    await waitFor(async () => (await logRows().count()) === 1 || undefined, { what: 'the filtered log' });
    const row = logRows().first();
    expect(await row.getByRole('link').textContent()).toBe(failedId);
    await row.getByText('CONFLICT').waitFor();

    // The link is reachable and followed by keyboard.
    await row.getByRole('link').focus();
    await page.keyboard.press('Enter');
    await heading('Call of transfer').waitFor();
  });

  it("finds a call by the request id the runtime logged and draws its phases, with the runtime's error", async () => {
    await page.goto('/console/executions');
    await heading('Executions').waitFor();
    const field = page.getByRole('textbox', { name: 'Request id' });
    await field.focus();
    await page.keyboard.type('req_nope');
    await page.keyboard.press('Enter');
    await page.getByText('A request id is req_ followed by 22 letters or digits.').waitFor();

    await field.fill('');
    await page.keyboard.type(failedId);
    await page.keyboard.press('Enter');
    await heading('Call of transfer').waitFor();
    await page.getByText('transfer already booked').waitFor();
    const facts = page.getByRole('region', { name: 'Summary' });
    await facts.getByText(failedId).waitFor();
    await facts.getByText('1 (0 retries)').waitFor();
    const phases = page.getByRole('table', { name: 'Phase timings' }).locator('tbody tr');
    expect(await phases.count()).toBe(3);
    expect(await phases.locator('th').allTextContents()).toEqual([
      expect.stringContaining('Resolve'),
      expect.stringContaining('Invoke'),
      expect.stringContaining('Deliver'),
    ]);
    // The drawn bar: one segment per phase, wider for the longer phase.
    const segments = page.locator('.timeline-bar .timeline-segment');
    expect(await segments.count()).toBe(3);
    const widths = await segments.evaluateAll((nodes) => nodes.map((n) => n.getBoundingClientRect().width));
    expect(widths.every((w) => w >= 3)).toBe(true);
    await screenshot(page, 'console-execution-detail');
    expect(await seriousAxeViolations(page)).toEqual([]);

    // A state call: all four phases, in order.
    await page.goto(`/console/executions/${okId}`);
    await heading('Call of balance').waitFor();
    expect(await phases.count()).toBe(4);
    expect((await phases.locator('th').allTextContents()).map((t) => t.trim().split(':')[0])).toEqual([
      'Accept',
      'Resolve',
      'Invoke',
      'Deliver',
    ]);
  });

  it('shows the events of the apps, filtered by type, each opening to its envelope by keyboard', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Events' }).click();
    await heading('Events').waitFor();
    const items = page.getByRole('list', { name: 'Events, newest first' }).getByRole('listitem');
    await items.first().waitFor();
    await page.getByLabel('Type', { exact: true }).selectOption('capability.failed');
    await waitFor(async () => (await items.count()) === 1 || undefined, { what: 'the capability.failed event alone' });
    const summary = items.first().locator('summary');
    await summary.focus();
    await page.keyboard.press('Enter');
    const envelope = JSON.parse((await items.first().locator('pre').textContent())!) as { type: string; data: { request_id: string } };
    expect(envelope).toMatchObject({ type: 'capability.failed', data: { request_id: failedId } });
    expect(await seriousAxeViolations(page)).toEqual([]);
  });

  it('says so when a request id is not one of this developer’s calls', async () => {
    await page.goto('/console/executions/req_0000000000000000000000');
    await page.getByRole('alert').waitFor();
    await page.getByRole('link', { name: 'Back to the execution log' }).waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
  });

  it('pages older calls with "Load older executions", and offers it no more at the end', async () => {
    await moreCalls(20, 23);
    await page.goto('/console/executions');
    await heading('Executions').waitFor();
    await waitFor(async () => (await logRows().count()) === 20 || undefined, { what: 'the first page of 20 calls' });
    const older = page.getByRole('button', { name: 'Load older executions' });
    await older.focus();
    await page.keyboard.press('Enter');
    await waitFor(async () => (await logRows().count()) === 23 || undefined, { what: 'all 23 calls' });
    expect(await logRows().last().getByRole('link').textContent()).toBe(okId);
    expect(await older.count()).toBe(0);
  });
});
