import { createHmac } from 'node:crypto';
import { Browser, Page } from 'playwright-core';
import { launchBrowser, newPage, screenshot, seriousAxeViolations } from '../support/browser';
import { TestEnvironment } from '../support/harness';
import { onboardDeveloper, OnboardedDeveloper, registerApp, RegisteredApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { waitFor } from '../support/wait-for';
import { ReceivedWebhook, WebhookReceiver } from '../support/webhook-receiver';

const signedWith = (secret: string, r: ReceivedWebhook) =>
  r.headers['x-service-signature'] === `sha256=${createHmac('sha256', secret).update(r.raw).digest('hex')}`;

/**
 * Several webhook endpoints in the developer console (issue 20): add one by
 * keyboard, read its ping result, check it again once the receiver knows the
 * secret, rotate the secret, send a test event and follow it in the
 * endpoint's delivery log to a replay. Real api, worker and HTTPS receiver.
 */
describe('developer console: webhook endpoints', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let receiver: WebhookReceiver;
  let url: string;
  let browser: Browser;
  let page: Page;
  let developer: OnboardedDeveloper;
  let app: RegisteredApp;
  /** The secrets the receiver at /hooks/billing checks signatures with (none at first: it is set up after the endpoint). */
  const known: string[] = [];

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    receiver = await WebhookReceiver.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, WEBHOOK_RETRY_BASE_MS: '1' });
    url = (await env.startApi()).url;
    await env.startWorker();
    developer = await onboardDeveloper(url, smtp, 'endpoints-console@example.com');
    app = await registerApp(url, developer, { name: 'Acme Ledger', webhook_url: `${receiver.url}/profile` });
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
    // A receiver that verifies signatures: 401 unless one of the known secrets signed the request.
    receiver.decide = (r) =>
      r.path === '/hooks/billing' && !known.some((s) => signedWith(s, r)) ? { status: 401, body: 'bad signature' } : undefined;
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await env?.close();
    await receiver?.close();
    await smtp?.close();
  });

  const heading = (name: string | RegExp, level = 1) => page.getByRole('heading', { name, level });
  const region = (name: string) => page.getByRole('region', { name, exact: true });
  const expectNoAxeFindings = async () => expect(await seriousAxeViolations(page)).toEqual([]);

  it('adds an endpoint with the keyboard and shows its secret once and the failed ping of a receiver without it', async () => {
    await page.goto(`/console/apps/${app.id}/webhook`);
    await heading('Webhooks of Acme Ledger').waitFor();
    const endpoints = region('Endpoints');
    // The webhook profile is listed as the first endpoint.
    await endpoints
      .getByRole('row')
      .filter({ hasText: `${receiver.url}/profile` })
      .getByText('profile', { exact: true })
      .waitFor();
    await expectNoAxeFindings();

    await page.getByLabel('New endpoint URL', { exact: true }).focus();
    await page.keyboard.type(`${receiver.url}/billing`);
    await page.keyboard.press('Tab');
    await page.keyboard.type('Billing sync');
    // Narrow the event types: untick "all", tick install.created with the keyboard.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    await endpoints.getByRole('checkbox', { name: 'install.created' }).focus();
    await page.keyboard.press('Space');
    await endpoints.getByRole('button', { name: 'Add endpoint' }).focus();
    await page.keyboard.press('Enter');

    await heading(`Endpoint ${receiver.url}/billing`).waitFor();
    const secret = (await region('Endpoint signing secret').locator('code').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    const check = region('Endpoint check');
    await check.getByText('The signed ping failed: HTTP 401').waitFor();
    await expectNoAxeFindings();
    await screenshot(page, 'console-webhook-endpoint-ping');

    const [ping] = receiver.received.filter((r) => r.path === '/hooks/billing');
    expect(ping.body).toMatchObject({ type: 'ping', app_id: app.id });
    expect(signedWith(secret, ping)).toBe(true);

    // The receiver learns the secret; checking again shows that it verifies signatures.
    known.push(secret);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    await check.getByRole('button', { name: 'Check again' }).click();
    await check.getByText('your receiver verifies signatures').waitFor();

    // Both pings are in the endpoint's delivery log.
    const log = region('Delivery log');
    await log.getByRole('row').filter({ hasText: 'ping' }).filter({ hasText: 'delivered' }).waitFor();
    await log.getByRole('row').filter({ hasText: 'ping' }).filter({ hasText: 'failed' }).waitFor();
  });

  it('rotates the secret through the dialog, then sends a test event signed with both secrets', async () => {
    const oldSecret = known[0];
    await page.getByRole('button', { name: 'Rotate signing secret' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the signing secret?' });
    await dialog.getByRole('button', { name: 'Rotate signing secret' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const rotated = (await region('Endpoint signing secret').locator('code').textContent())!;
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(oldSecret);
    // The receiver is given the new secret (until it is, the previous one still signs beside it).
    known.push(rotated);

    await page.getByLabel('Event type', { exact: true }).selectOption('install.created');
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText('Test event install.created queued').waitFor();
    const row = region('Delivery log').getByRole('row').filter({ hasText: 'install.created' });
    await row.getByText('delivered').waitFor();
    const got = receiver.received.filter((r) => r.path === '/hooks/billing' && r.body.type === 'install.created');
    expect(got).toHaveLength(1);
    expect(signedWith(rotated, got[0])).toBe(true);
    expect(got[0].headers['x-service-signature-previous']).toBe(
      `sha256=${createHmac('sha256', oldSecret).update(got[0].raw).digest('hex')}`,
    );
    // The profile's receiver got nothing of this endpoint's test event.
    expect(receiver.received.filter((r) => r.path === '/hooks/profile')).toHaveLength(0);
    await screenshot(page, 'console-webhook-endpoint');
  });

  it('opens a delivery from the endpoint log and replays it to the same endpoint', async () => {
    const row = region('Delivery log').getByRole('row').filter({ hasText: 'install.created' });
    await row.getByRole('link', { name: 'install.created' }).click();
    await heading('Delivery of install.created').waitFor();
    await page.getByRole('button', { name: 'Replay delivery' }).click();
    await page.getByText('with the same event id and idempotency key').waitFor();
    const sent = await waitFor(
      () => {
        const copies = receiver.received.filter((r) => r.path === '/hooks/billing' && r.body.type === 'install.created');
        return copies.length === 2 ? copies : undefined;
      },
      { what: 'the replayed delivery' },
    );
    expect(sent[1].raw.equals(sent[0].raw)).toBe(true);
    await expectNoAxeFindings();
  });

  it('pauses the endpoint from its settings and deletes it after confirming', async () => {
    await page.goto(`/console/apps/${app.id}/webhook`);
    await region('Endpoints')
      .getByRole('link', { name: `${receiver.url}/billing` })
      .click();
    await heading(`Endpoint ${receiver.url}/billing`).waitFor();
    await page.getByRole('checkbox', { name: 'Send deliveries' }).uncheck();
    await page.getByRole('button', { name: 'Save endpoint' }).click();
    await page.getByText('Endpoint saved.').waitFor();
    await page.getByText('Deliveries are paused: disabled by the provider').waitFor();

    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this endpoint?' });
    await dialog.getByRole('button', { name: 'Delete endpoint' }).click();
    await heading('Webhooks of Acme Ledger').waitFor();
    await region('Endpoints')
      .getByRole('row')
      .filter({ hasText: `${receiver.url}/profile` })
      .waitFor();
    expect(
      await region('Endpoints')
        .getByRole('link', { name: `${receiver.url}/billing` })
        .count(),
    ).toBe(0);
  });
});
