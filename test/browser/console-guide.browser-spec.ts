import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Browser, Locator, Page } from 'playwright-core';
import request from 'supertest';
import { launchBrowser, newPage, screenshot, seriousAxeViolations } from '../support/browser';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, OnboardedDeveloper, publishVersion, registerApp, RegisteredApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { login } from '../support/users';

const run = promisify(execFile);

/**
 * The console that guides (issue 24): every error of a refused descriptor beside the editor, the lifecycle
 * checklist with its next step, the "call it" commands (run here for real with curl), the listing link into
 * /app, install count and runtime health. Against the real api, worker and an HTTPS provider runtime.
 */
describe('developer console: a console that guides', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let browser: Browser;
  let page: Page;
  let developer: OnboardedDeveloper;
  let app: RegisteredApp;
  let appAuth: { authorization: string };
  let packageId = '';
  let versionId = '';

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
    url = (await env.startApi()).url;
    await env.startWorker();
    developer = await onboardDeveloper(url, smtp, 'guide-dev@example.com');
    app = await registerApp(url, developer);
    appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    browser = await launchBrowser();
    page = await newPage(browser, { baseURL: url });
    await page.goto('/console/login');
    const stored = JSON.stringify({
      token: developer.token,
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      email: developer.email,
    });
    await page.evaluate(
      `localStorage.setItem('soul.console.session', ${JSON.stringify(stored)}); sessionStorage.setItem('soul.console.session', ${JSON.stringify(stored)});`,
    );
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  const heading = (name: string | RegExp, level = 1) => page.getByRole('heading', { name, level });
  const fact = (name: string): Locator => page.locator('.facts > div', { has: page.locator('dt', { hasText: name }) }).locator('dd');
  const steps = () => page.getByRole('list', { name: 'Lifecycle steps' });
  const currentStep = () => steps().locator('[aria-current="step"]');
  const expectNoAxeFindings = async () => expect(await seriousAxeViolations(page)).toEqual([]);

  function packageBody(extra: Record<string, unknown> = {}) {
    return {
      name: 'Guided Bank',
      slug: 'guided-bank',
      description: 'Balances, transfers and transactions of Guided Bank accounts.',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      version: '1.0.0',
      capabilities: goodPackageCapabilities(),
      ...extra,
    };
  }

  it('lists every error of a refused create beside the JSON editor, each with its field', async () => {
    // Three mistakes at once: an unknown field, a risk tier that does not exist, a missing name.
    const { name, ...withoutName } = packageBody({ riskTier: 'spicy', nmae: 'typo' });
    expect(name).toBe('Guided Bank');
    const refused = await request(url)
      .post('/v1/providers/packages')
      .set(developer.auth)
      .send({ ...withoutName, appId: app.id })
      .expect(400);
    const errors = refused.body.errors as Array<{ field: string; message: string }>;
    expect(errors.length).toBeGreaterThanOrEqual(2);

    await page.goto('/console/packages/new');
    await heading('Create a package').waitFor();
    await page.getByLabel('Package descriptor (JSON)', { exact: true }).fill(JSON.stringify(withoutName, null, 2));
    // Keyboard only: focus the button and press Enter.
    await page.getByRole('button', { name: 'Create package' }).focus();
    await page.keyboard.press('Enter');
    const list = page.getByRole('list', { name: 'Errors by field' });
    await list.waitFor();
    await page.getByRole('region', { name: `${errors.length} errors in the JSON: fix each and send again` }).waitFor();
    const items = await list.getByRole('listitem').allTextContents();
    expect(items).toHaveLength(errors.length);
    errors.forEach((error, index) => {
      expect(items[index]).toContain(error.field);
      expect(items[index]).toContain(error.message);
    });
    // The list follows the editor it is about.
    const order = await page.evaluate<number>(
      `(() => {
        const editor = document.querySelector('textarea[name="descriptor"]');
        const errorList = document.querySelector('.descriptor-errors');
        return editor && errorList ? editor.compareDocumentPosition(errorList) & Node.DOCUMENT_POSITION_FOLLOWING : 0;
      })()`,
    );
    expect(order).toBeTruthy();
    await expectNoAxeFindings();
    await screenshot(page, 'console-guide-errors');
  });

  it('after creating a package points to the next step: a checklist of the lifecycle', async () => {
    await page.getByLabel('Package descriptor (JSON)', { exact: true }).fill(JSON.stringify(packageBody(), null, 2));
    await page.getByRole('button', { name: 'Create package' }).click();
    await heading('Guided Bank').waitFor();
    packageId = /\/console\/packages\/(pkg_\w+)$/.exec(page.url())![1];
    versionId = (await request(url).get(`/v1/providers/packages/${packageId}`).set(developer.auth).expect(200)).body.versions[0].id;

    await heading('Lifecycle of version 1.0.0', 2).waitFor();
    expect(await steps().getByRole('listitem').count()).toBe(6);
    expect(await currentStep().textContent()).toContain('Validate (quick)');
    await fact('Installs').getByText('0').waitFor();
    await fact('Runtime health')
      .getByText(/Not probed yet/)
      .waitFor();
    await expectNoAxeFindings();

    await page.getByRole('link', { name: 'Go to the next step' }).focus();
    await page.keyboard.press('Enter');
    await heading('Guided Bank 1.0.0').waitFor();
    expect(await currentStep().textContent()).toContain('Validate (quick)');

    await page.getByRole('button', { name: 'Validate (quick)' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('region', { name: 'Conformance report' }).getByText('Score 100/100').waitFor();
    await currentStep().getByText('Validate fully (conformance)').waitFor();
    expect(await steps().getByRole('listitem').first().textContent()).toContain('Done');
    expect(await steps().getByRole('listitem').nth(1).textContent()).toContain('Passed with 100/100');
    await expectNoAxeFindings();
    await screenshot(page, 'console-guide-lifecycle');
  });

  it('shows the exact curl commands for a token and an execution, which work as shown', async () => {
    const panel = page.getByRole('region', { name: 'Call it' });
    const token = panel.getByRole('group', { name: 'Token command' }).locator('pre');
    const tokenCommand = (await token.textContent()) ?? '';
    expect(tokenCommand).toContain(`${url}/v1/auth/token`);
    expect(tokenCommand).toContain(app.client_id);
    expect(tokenCommand).toContain('grant_type=client_credentials');
    const execute = panel.getByRole('group', { name: 'Execute command' }).locator('pre');
    expect(await execute.textContent()).toContain(`/v1/providers/packages/${packageId}/capabilities/balance/execute`);
    expect(await execute.textContent()).toContain('"params":{"account":"checking"}');

    // The capability chosen by keyboard: the action takes `input`.
    await panel.getByLabel('Capability', { exact: true }).focus();
    await page.keyboard.press('ArrowDown');
    await execute.getByText(/capabilities\/transfer\/execute/).waitFor();
    expect(await execute.textContent()).toContain('"input":{');
    await panel.getByLabel('Capability', { exact: true }).selectOption('balance');

    // The copy button answers (clipboard, or a selection when the clipboard is refused).
    await panel.getByRole('button', { name: 'Copy execute command' }).focus();
    await page.keyboard.press('Enter');
    await panel.getByRole('status').filter({ hasText: 'Execute command:' }).waitFor();
    await expectNoAxeFindings();

    // Published and installed, the two commands run as shown (only the secret and the install id filled in).
    await publishVersion(url, appAuth, packageId, versionId);
    const user = await login(url, idp, { sub: 'uid-guide', email: 'guide-user@example.com' });
    const installId = (await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201)).body.id;
    const script = [
      tokenCommand.replace(`'<your client secret>'`, `'${app.client_secret}'`),
      ((await execute.textContent()) ?? '').replace('<install id from the install.created webhook>', installId),
    ].join('\n');
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { timeout: 30_000 });
    const answer = JSON.parse(stdout) as { status?: string; data?: unknown };
    expect(answer.status).toBe('ok');
    expect(answer.data).toBeDefined();
  }, 120_000);

  it('links the published listing into /app, and shows installs and runtime health', async () => {
    await page.goto(`/console/packages/${packageId}`);
    await heading('Guided Bank').waitFor();
    const listing = fact('Catalog').getByRole('link', { name: 'Open the listing in the app' });
    expect(await listing.getAttribute('href')).toBe('/app/marketplace/guided-bank');
    await request(url).get('/app/marketplace/guided-bank').expect(200);
    await fact('Installs').getByText('1').waitFor();
    await fact('Runtime health')
      .getByText(/last full run scored \d+\/100/)
      .waitFor();
    expect(await page.getByText('Every step is done.').count()).toBe(1);
    await expectNoAxeFindings();
    await screenshot(page, 'console-guide-package');
  });
});
