import { createHmac } from 'node:crypto';
import { authenticator } from 'otplib';
import { Browser, Locator, Page } from 'playwright-core';
import request from 'supertest';
import { launchBrowser, newPage, screenshot } from '../support/browser';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { ReceivedMail, SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { freshTotp } from '../support/totp';
import { WebhookReceiver } from '../support/webhook-receiver';

const EMAIL = 'console-dev@example.com';
const PASSWORD = 'correct horse battery staple';
const RECEIVER_ANSWER = 'received by the acme webhook endpoint';

/**
 * The provider onboarding through the developer console pages only, in
 * headless Chromium, against the real api and worker, a real SMTP sink, a
 * real HTTPS provider runtime and a real HTTPS webhook receiver. The operator's
 * approval is the one step outside the console (operator API).
 */
describe('developer console: onboarding to a published package', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let runtime: ProviderRuntime;
  let receiver: WebhookReceiver;
  let url: string;
  let browser: Browser;
  let page: Page;
  let totpSecret = '';
  /** Time step of the last accepted TOTP code: the service takes each step's code once. */
  let lastTotpStep = -1;
  let appId = '';
  let webhookSecret = '';
  /** The published version's page with its full conformance report (`?run=`). */
  let versionPage = '';

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    runtime = await ProviderRuntime.start();
    receiver = await WebhookReceiver.start();
    receiver.fallback = { status: 200, body: RECEIVER_ANSWER };
    env = await TestEnvironment.create({ SMTP_URL: smtp.url });
    url = (await env.startApi()).url;
    await env.startWorker();
    browser = await launchBrowser();
    page = await newPage(browser, { baseURL: url });
  });
  afterAll(async () => {
    await browser?.close();
    await env?.close();
    await receiver?.close();
    await runtime?.close();
    await smtp?.close();
  });

  const heading = (name: string | RegExp, level = 1) => page.getByRole('heading', { name, level });
  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name });

  it('signs up, verifies the email from the real mail and logs in', async () => {
    await page.goto('/console');
    await heading('Log in').waitFor();
    await screenshot(page, 'console-login');

    await page.getByRole('link', { name: 'Create a developer account' }).click();
    await heading('Create a developer account').waitFor();
    await page.getByLabel('Company name', { exact: true }).fill('Acme Tools');
    await page.getByLabel('Email', { exact: true }).fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill('too short');
    await page.getByRole('button', { name: 'Create account' }).click();
    // The browser's own check (minlength) keeps a short password from being sent.
    expect(
      await page
        .getByLabel('Password', { exact: true })
        .evaluate((input) => (input as unknown as { validity: { tooShort: boolean } }).validity.tooShort),
    ).toBe(true);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await heading('Check your email').waitFor();
    await page.getByText(EMAIL).waitFor();

    const link = verifyPath(await smtp.mailTo(EMAIL));
    await page.goto(link);
    await heading('Email verified').waitFor();
    await page.getByText(`${EMAIL} is verified`).waitFor();

    // The link is single use: opening it again explains that.
    const again = await newPage(browser, { baseURL: url });
    await again.goto(link);
    await again.getByRole('alert').getByText('already used').waitFor();
    await again.context().close();

    await page.getByRole('link', { name: 'Log in' }).click();
    await heading('Log in').waitFor();
    await page.getByText('Your email address is verified').waitFor();
    await logIn(page);
    await heading('Overview').waitFor();
    await page.getByText('Email address verified.').waitFor();
  });

  it('enrols MFA on the account page and then logs in with a code only when the API asks for it', async () => {
    await nav('Account').click();
    await heading('Account').waitFor();
    await page.getByRole('button', { name: 'Set up two-factor authentication' }).click();
    const uri = await page.getByText(/^otpauth:\/\/totp\//).textContent();
    totpSecret = new URL(uri!).searchParams.get('secret')!;
    expect(totpSecret).toMatch(/^[A-Z2-7]+=*$/);
    await page.getByText(totpSecret, { exact: true }).waitFor();

    await page.getByLabel('Code from your app', { exact: true }).fill(wrongCode(authenticator.generate(totpSecret)));
    await page.getByRole('button', { name: 'Turn on two-factor authentication' }).click();
    await page.getByRole('alert').getByText('does not match').waitFor();
    const confirmation = await freshTotp(totpSecret);
    lastTotpStep = confirmation.step;
    await page.getByLabel('Code from your app', { exact: true }).fill(confirmation.code);
    await page.getByRole('button', { name: 'Turn on two-factor authentication' }).click();
    await page.getByText('Two-factor authentication is on. From now on').waitFor();

    await page.getByRole('button', { name: 'Log out' }).click();
    await heading('Log in').waitFor();
    expect(await page.getByLabel('Authentication code', { exact: true }).count()).toBe(0);
    await page.getByLabel('Email', { exact: true }).fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').getByText('mfa_required').waitFor();
    const code = page.getByLabel('Authentication code', { exact: true });
    await code.waitFor();
    // The code field takes the focus when it appears.
    await page.waitForFunction("document.activeElement?.getAttribute('name') === 'totp'");
    // Each code is accepted once: the one that turned MFA on cannot log in, so this one is from a later step.
    const login = await freshTotp(totpSecret, { afterStep: lastTotpStep });
    lastTotpStep = login.step;
    await code.fill(login.code);
    await page.getByRole('button', { name: 'Log in' }).click();
    // The deep link that asked for the login (/account) is where the console continues.
    await heading('Account').waitFor();
    await page.getByText('Two-factor authentication is on for this account.').waitFor();
  }, 90_000);

  it('registers an app, shows its client secret once, and rotates it through a keyboard-usable dialog', async () => {
    await nav('Apps').click();
    await heading('Apps').waitFor();
    await page.getByText('No apps yet').waitFor();
    await page.getByRole('link', { name: 'Register an app' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Acme Calendar');
    await page.getByLabel('Description', { exact: true }).fill('Calendar sync for Acme customers');
    await page.getByLabel('Redirect URIs', { exact: true }).fill('https://acme.example/callback\nhttps://acme.example/callback2');
    await page.getByLabel('capabilities:execute', { exact: true }).uncheck();
    await page.getByLabel('Webhook URL', { exact: true }).fill(receiver.url);
    await page.getByRole('button', { name: 'Register app' }).click();

    await heading('Acme Calendar').waitFor();
    appId = /\/console\/apps\/(app_\w+)$/.exec(page.url())![1];
    const reveal = page.getByRole('region', { name: 'Client secret' });
    await reveal.getByText('you won’t see it again').waitFor();
    await reveal.getByRole('button', { name: 'Copy client secret' }).waitFor();
    const secret = (await reveal.locator('code').textContent())!;
    const clientId = (await factValue(page, 'Client id').textContent())!;
    await screenshot(page, 'console-app-secret');
    // What the page showed is the working credential.
    await request(url).post('/v1/auth/token').auth(clientId, secret).type('form').send({ grant_type: 'client_credentials' }).expect(200);
    const scopes = await factValue(page, 'Scopes').textContent();
    expect(scopes).toContain('webhooks:write');
    expect(scopes).not.toContain('capabilities:execute');

    // The Webhook URL gave the app its webhook profile: its signing secret is shown once too.
    const signing = page.getByRole('region', { name: 'Webhook signing secret' });
    await signing.getByText('you won’t see it again').waitFor();
    webhookSecret = (await signing.locator('code').textContent())!;
    expect(webhookSecret).toMatch(/^whsec_\S{16,}/);
    await signing.getByRole('button', { name: 'I have stored it' }).click();
    await signing.waitFor({ state: 'detached' });

    await reveal.getByRole('button', { name: 'I have stored it' }).click();
    await reveal.waitFor({ state: 'detached' });
    await page.reload();
    await heading('Acme Calendar').waitFor();
    expect(await page.getByRole('region', { name: 'Client secret' }).count()).toBe(0);

    // Escape cancels the dialog and nothing is rotated.
    await page.getByRole('button', { name: 'Rotate client secret' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the client secret?' });
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.getByRole('region', { name: 'Client secret' }).count()).toBe(0);

    await page.getByRole('button', { name: 'Rotate client secret' }).click();
    await dialog.getByLabel('Old secret stops working', { exact: true }).selectOption({ label: 'Immediately' });
    await dialog.getByRole('button', { name: 'Rotate secret' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const rotated = (await page.getByRole('region', { name: 'Client secret' }).locator('code').textContent())!;
    expect(rotated).not.toBe(secret);
    await request(url).post('/v1/auth/token').auth(clientId, secret).type('form').send({ grant_type: 'client_credentials' }).expect(401);

    await page.getByRole('button', { name: 'Edit app details' }).click();
    expect(await page.getByLabel('Redirect URIs', { exact: true }).inputValue()).toBe(
      'https://acme.example/callback\nhttps://acme.example/callback2',
    );
    expect(await page.getByLabel('capabilities:execute', { exact: true }).isChecked()).toBe(false);
    await page.getByLabel('Description', { exact: true }).fill('Calendar and contacts sync');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await factValue(page, 'Description').getByText('Calendar and contacts sync').waitFor();
  });

  it('sets the webhook profile, sends a test event, shows the delivery with its attempt, and replays it', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await heading('Webhooks of Acme Calendar').waitFor();
    expect(await page.getByLabel('Endpoint URL', { exact: true }).inputValue()).toBe(receiver.url);
    await page.getByLabel('Timeout (seconds)', { exact: true }).fill('10');
    await page.getByRole('button', { name: 'Save webhook profile' }).click();
    await page.getByText('Webhook profile saved.').waitFor();
    // The profile existed since registration: saving it reveals no new secret.
    expect(await page.getByRole('region', { name: 'New signing secret' }).count()).toBe(0);
    const signingSecret = webhookSecret;

    await page.getByLabel('Event type', { exact: true }).selectOption('package.published');
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText('Test event package.published queued').waitFor();

    const log = page.getByRole('region', { name: 'Delivery log' });
    const row = log.getByRole('row').filter({ hasText: 'package.published' });
    await row.getByText('delivered').waitFor();
    expect(await row.getByRole('cell').nth(2).textContent()).toBe('1');
    expect(await row.getByRole('cell').nth(3).textContent()).toBe('200');
    // A test event concerns no package: the Package column says so.
    expect(await row.getByRole('cell').nth(4).textContent()).toBe('—');
    await screenshot(page, 'console-delivery-log');
    expect(receiver.received).toHaveLength(1);
    const eventId = receiver.received[0].body.id as string;
    // The secret the page revealed is the one deliveries are signed with.
    const expected = `sha256=${createHmac('sha256', signingSecret).update(receiver.received[0].raw).digest('hex')}`;
    expect(receiver.received[0].headers['x-service-signature']).toBe(expected);

    await row.getByRole('link', { name: 'package.published' }).click();
    await heading('Delivery of package.published').waitFor();
    await page.getByRole('heading', { name: 'Attempt 1', level: 3 }).waitFor();
    const attempt = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Attempt 1' }) });
    expect(await factValue(attempt, 'Status code').textContent()).toBe('200');
    expect(await factValue(attempt, 'Time').textContent()).toMatch(/^\d+ ms$/);
    expect(await attempt.getByRole('figure', { name: 'Response body' }).locator('pre').textContent()).toBe(RECEIVER_ANSWER);
    await screenshot(page, 'console-delivery-detail');

    await page.getByRole('button', { name: 'Replay delivery' }).click();
    await page.getByText('with the same event id and idempotency key').waitFor();
    await page.getByRole('heading', { name: 'Attempt 1', level: 3 }).waitFor();
    await factValue(page, 'Status').getByText('delivered').waitFor();
    expect(await factValue(page, 'Event id').textContent()).toBe(eventId);
    expect(receiver.of(eventId)).toHaveLength(2);

    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('region', { name: 'Delivery log' }).getByText('replay').waitFor();

    await page.getByRole('button', { name: 'Rotate signing secret' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the signing secret?' });
    await dialog.getByRole('button', { name: 'Rotate signing secret' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const rotated = (await page.getByRole('region', { name: 'New signing secret' }).locator('code').textContent())!;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(signingSecret);
  });

  it('creates a package from a descriptor, validates it fully, submits, and publishes it after review', async () => {
    await nav('Packages').click();
    await heading('Packages').waitFor();
    await page.getByRole('link', { name: 'Create a package' }).click();
    await heading('Create a package').waitFor();
    await page.getByLabel('App', { exact: true }).selectOption(appId);
    const descriptor = page.getByLabel('Package descriptor (JSON)', { exact: true });

    await descriptor.fill('{ "name": "Acme Bank", ');
    await page.getByRole('button', { name: 'Create package' }).click();
    await page.getByRole('alert').getByText('The descriptor is not valid JSON').waitFor();

    // A property without a type: the API's invalid_schema problem names the field and the schema path.
    const broken = goodPackageCapabilities() as Array<{ schema: { properties: Record<string, unknown> } }>;
    broken[0].schema.properties.account = { description: 'Which account to read the balance of.' };
    await descriptor.fill(JSON.stringify(packageBody(broken), null, 2));
    await page.getByRole('button', { name: 'Create package' }).click();
    const problem = page.getByRole('alert');
    await problem.getByText('Invalid Schema').waitFor();
    await problem.getByText('invalid_schema').waitFor();
    expect(await factValue(problem, 'Schema path').textContent()).toContain('account');
    expect(await factValue(problem, 'Field').textContent()).toContain('capabilities');

    await descriptor.fill(JSON.stringify(packageBody(goodPackageCapabilities()), null, 2));
    await page.getByRole('button', { name: 'Create package' }).click();
    await heading('Acme Bank').waitFor();
    const packageId = /\/console\/packages\/(pkg_\w+)$/.exec(page.url())![1];
    await factValue(page, 'Catalog').getByText('Not published').waitFor();
    await page.getByRole('link', { name: 'Version 1.0.0' }).click();

    await heading('Acme Bank 1.0.0').waitFor();
    const versionId = /\/versions\/(ver_\w+)/.exec(page.url())![1];
    const submit = page.getByRole('button', { name: 'Submit for review' });
    const publish = page.getByRole('button', { name: 'Publish' });
    expect(await submit.isEnabled()).toBe(true);
    expect(await publish.isDisabled()).toBe(true);

    await page.getByRole('button', { name: 'Validate (quick)' }).click();
    const report = page.getByRole('region', { name: 'Conformance report' });
    await report.getByText('Quick validation: schema, contracts and documentation only.').waitFor();
    await report.getByText('Score 100/100').waitFor();
    expect(await report.getByText('Not run by quick validation').count()).toBe(3);

    await page.getByRole('button', { name: 'Validate fully' }).click();
    await report.getByText('Full run: all six dimensions').waitFor();
    await report.getByText(/^Score \d+\/100/).waitFor({ timeout: 60_000 });
    const dimensions = ['Schema', 'Contracts', 'Documentation', 'Performance', 'Error handling', 'Security'];
    expect(await report.getByRole('heading', { level: 3 }).allTextContents()).toEqual(dimensions);
    for (const name of dimensions) {
      const dimension = report.getByRole('region', { name: `${name} dimension` });
      expect(await dimension.getByRole('meter', { name: `${name} score` }).count()).toBe(1);
      expect(
        await dimension
          .getByRole('list', { name: `${name} findings` })
          .getByRole('listitem')
          .count(),
      ).toBeGreaterThan(0);
    }
    expect(await report.getByText('Not run by quick validation').count()).toBe(0);
    await screenshot(page, 'console-package-report');

    await submit.click();
    await page.getByText('Submitted. The version is in the review queue').waitFor();
    await factValue(page, 'State').getByText('in review').waitFor();
    expect(await submit.isDisabled()).toBe(true);
    expect(await publish.isDisabled()).toBe(true);

    // action_capable goes to manual review: the operator approves through the operator API.
    await request(url)
      .post(`/v1/operator/packages/${packageId}/versions/${versionId}/approve`)
      .set({ authorization: `Bearer ${OPERATOR_TOKEN}` })
      .expect(200);
    await page.reload();
    await factValue(page, 'State').getByText('approved').waitFor();
    expect(await publish.isEnabled()).toBe(true);
    await publish.click();
    await page.getByText('Published version 1.0.0 to the catalog').waitFor();
    versionPage = new URL(page.url()).pathname + new URL(page.url()).search;
    await factValue(page, 'State').getByText('published').waitFor();

    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'Acme Bank' }).click();
    await heading('Acme Bank').waitFor();
    await factValue(page, 'Catalog').getByText('Published: version 1.0.0').waitFor();
  }, 120_000);

  it('shows the submission gate’s problem detail when a dimension scores below 5', async () => {
    await page.getByRole('link', { name: 'New version' }).click();
    await heading('New version of Acme Bank').waitFor();
    expect(await page.getByLabel('Version', { exact: true }).inputValue()).toBe('1.0.1');
    await page.getByRole('button', { name: 'Create version' }).click();
    await heading('Acme Bank 1.0.1').waitFor();
    // The runtime now leaks a credential in its answers: security drops below the floor.
    await runtime.behave('leaks_secrets');
    try {
      await page.getByRole('button', { name: 'Submit for review' }).click();
      const alert = page.getByRole('alert');
      await alert.getByText('Dimension Below Threshold').waitFor({ timeout: 60_000 });
      await alert.getByText('dimension_below_threshold').waitFor();
      expect(await factValue(alert, 'Dimension').textContent()).toBe('security');
      // The report of the run the gate judged is shown beside the problem.
      const security = page.getByRole('region', { name: 'Security dimension' });
      await security.getByText('below 5: blocks submission').waitFor();
      await factValue(page, 'State').getByText('draft').waitFor();
    } finally {
      await runtime.behave('conforming');
    }
  }, 90_000);

  it('opens and closes the navigation menu at 390 px and navigates with it', async () => {
    const mobile = await newPage(browser, { baseURL: url, mobile: true });
    await mobile.goto('/console/packages');
    await mobile.getByLabel('Email', { exact: true }).fill(EMAIL);
    await mobile.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await mobile.getByRole('button', { name: 'Log in' }).click();
    await mobile.getByLabel('Authentication code', { exact: true }).fill((await freshTotp(totpSecret, { afterStep: lastTotpStep })).code);
    await mobile.getByRole('button', { name: 'Log in' }).click();
    await mobile.getByRole('heading', { name: 'Packages', level: 1 }).waitFor();

    const menu = mobile.getByRole('button', { name: 'Menu' });
    const apps = mobile.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Apps' });
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await apps.isVisible()).toBe(false);
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await apps.waitFor({ state: 'visible' });
    await screenshot(mobile, 'console-mobile-menu');
    await apps.click();
    await mobile.getByRole('heading', { name: 'Apps', level: 1 }).waitFor();
    await apps.waitFor({ state: 'hidden' });
    // Focus moves to the new page's main region, as after a full page load.
    await mobile.waitForFunction("document.activeElement?.id === 'main'");
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    // Nothing is wider than the screen, on a list page nor on the version page with its report.
    expect(await mobile.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await mobile.goto(versionPage);
    await mobile.getByRole('region', { name: 'Security dimension' }).waitFor();
    expect(await mobile.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await mobile.context().close();
  }, 90_000);

  it('lets an unverified developer log in and send a new verification link, which replaces the first', async () => {
    const email = 'late-reader@example.com';
    const other = await newPage(browser, { baseURL: url });
    await other.goto('/console/signup');
    await other.getByLabel('Company name', { exact: true }).fill('Initech');
    await other.getByLabel('Email', { exact: true }).fill(email);
    await other.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await other.getByRole('button', { name: 'Create account' }).click();
    await other.getByRole('heading', { name: 'Check your email', level: 1 }).waitFor();
    const first = verifyPath(await smtp.mailTo(email));

    await other.getByRole('link', { name: 'Log in' }).click();
    await other.getByLabel('Email', { exact: true }).fill(email);
    await other.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await other.getByRole('button', { name: 'Log in' }).click();
    await other.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    const verify = other.getByRole('region', { name: 'Verify your email address' });
    await verify.getByRole('button', { name: 'Send a new verification link' }).click();
    await verify.getByText(`A new verification link is on its way to ${email}`).waitFor();
    const second = verifyPath(await smtp.mailTo(email, 1));
    expect(second).not.toBe(first);

    await other.goto(first);
    await other.getByRole('alert').getByText('replaced by a newer one').waitFor();
    await other.goto(second);
    await other.getByRole('heading', { name: 'Email verified', level: 1 }).waitFor();
    // Still signed in in this tab: the page leads back into the console.
    await other.getByRole('link', { name: 'Go to the console' }).click();
    await other.getByText('Email address verified.').waitFor();
    expect(await other.getByRole('region', { name: 'Verify your email address' }).count()).toBe(0);
    await other.context().close();
  });

  function packageBody(capabilities: unknown[]) {
    return {
      name: 'Acme Bank',
      slug: 'acme-bank',
      description: 'Balances, transfers and transactions of Acme Bank accounts.',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      version: '1.0.0',
      capabilities,
    };
  }
});

/**
 * The path and query of the link in a verification mail. The link names
 * PUBLIC_BASE_URL; the test's api listens on another port, so the page opens
 * the same path there.
 */
function verifyPath(mail: ReceivedMail): string {
  const link = /(\S+\/console\/verify-email\?token=\S+)/.exec(mail.text)?.[1];
  if (!link) throw new Error(`no console verification link in: ${mail.text}`);
  const { pathname, search } = new URL(link);
  return pathname + search;
}

async function logIn(page: Page) {
  await page.getByLabel('Email', { exact: true }).fill(EMAIL);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
}

/** The value (dd) of a label (dt) in a list of facts. */
function factValue(scope: Page | Locator, term: string): Locator {
  return scope
    .getByRole('term')
    .filter({ hasText: new RegExp(`^${term}$`) })
    .locator('xpath=following-sibling::dd[1]');
}

function wrongCode(code: string): string {
  return code.replace(/^./, (digit) => String((Number(digit) + 1) % 10));
}
