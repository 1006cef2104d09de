import { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { launchBrowser, newPage, screenshot, seriousAxeViolations } from '../support/browser';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { login } from '../support/users';
import { INestApplicationContext } from '@nestjs/common';
import { StatePoller } from '../../src/modules/runtime-bridge/state-poller';

const described = (type: string, description: string, extra: Record<string, unknown> = {}) => ({ type, description, ...extra });

/** A state capability whose descriptor names its title, field labels, units and formats, and prefers stat_row then sparkline. */
function deskCapabilities(): unknown[] {
  return [
    {
      type: 'state',
      name: 'queue_stats',
      description: 'Open tickets of the support queue, with the last hours as a trend.',
      refreshInterval: 300,
      schema: {
        type: 'object',
        properties: { queue: described('string', 'Which queue.', { enum: ['support', 'billing'], default: 'support' }) },
        additionalProperties: false,
      },
      responseSchema: {
        type: 'object',
        properties: {
          open: described('integer', 'Open tickets now.'),
          resolvedRatio: described('number', 'Share of today’s tickets resolved.'),
          history: described('array', 'Open tickets at each of the last hours.', { items: { type: 'number' } }),
          queue: described('string', 'The queue.'),
        },
      },
      surfaceGuidance: {
        intent: 'ambient_context',
        placement: ['home_widgets'],
        preferredComponents: ['stat_row', 'sparkline'],
        title: 'Support queue',
        fields: {
          open: { label: 'Open now', unit: 'tickets', format: 'integer' },
          resolvedRatio: { label: 'Resolved today', format: 'percent' },
          history: { label: 'Open tickets by hour', format: 'integer' },
          queue: { hidden: true },
        },
      },
    },
  ];
}

/**
 * A widget as its descriptor says (issue 24): a real package published with
 * `surfaceGuidance.title` and `fields`, installed, polled once by the worker
 * right after the install, and rendered on the home page as a labelled
 * stat_row and a sparkline of the series, both, in the provider's order.
 */
describe('web pages: widgets render what the descriptor says', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let browser: Browser;
  let page: Page;
  let worker: INestApplicationContext;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start({ capabilities: deskCapabilities() });
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
    url = (await env.startApi()).url;
    worker = await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' } });
    const developer = await onboardDeveloper(url, smtp, 'desk-browser@example.com');
    const app = await registerApp(url, developer);
    const appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    const { packageId } = await publishPackage(url, appAuth, {
      appId: app.id,
      name: 'Desk',
      slug: 'desk',
      description: 'Support desk figures',
      riskTier: 'data_only',
      runtimeUrl: runtime.url,
      capabilities: deskCapabilities(),
    });
    const who = { sub: 'uid-faithful-browser', name: 'Fay Widget', email: 'fay@example.com' };
    const user = await login(url, idp, who);
    // The install's first poll takes this answer.
    runtime.scriptNext({
      status: 200,
      body: { status: 'ok', data: { open: 12, resolvedRatio: 0.8, history: [9, 11, 14, 12], queue: 'support' }, ttl: 300 },
    });
    await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201);
    // One tick of the (otherwise hourly) poller fills the widget.
    await worker.get(StatePoller, { strict: false }).pollDue();
    browser = await launchBrowser();
    page = await newPage(browser, { baseURL: url });
    await page.goto('/app');
    await page.getByLabel('Identity provider token', { exact: true }).fill(await idp.token(who));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Your widgets' }).waitFor();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  it('shows the descriptor’s title, a labelled stat_row with units and formats, and a sparkline of the series', async () => {
    const widget = page.getByRole('region', { name: 'Support queue (Desk)' });
    await widget.getByRole('heading', { name: 'Support queue' }).waitFor({ timeout: 20_000 });
    await widget.locator('dl.stat-row').waitFor({ timeout: 20_000 });
    const rows = await widget.locator('dl.stat-row .stat').allInnerTexts();
    expect(rows.map((row) => row.replace(/\s+/g, ' ').trim())).toEqual([
      'Open now 12 tickets',
      'Resolved today 80%',
      'Open tickets by hour 9, 11, 14 +1 more',
    ]);
    // The hidden field is not shown, and the sparkline follows the stat row (the provider's order).
    await expect(widget.getByText('support', { exact: true }).count()).resolves.toBe(0);
    const sparkline = widget.getByRole('img', { name: /Open tickets by hour: 4 points from 9 to 12, lowest 9, highest 14/ });
    await sparkline.waitFor();
    await expect(widget.locator('.widget-part').evaluateAll((parts) => parts.map((p) => p.className))).resolves.toEqual([
      'widget-part widget-part-stat_row',
      'widget-part widget-part-sparkline',
    ]);
    await screenshot(page, 'app-faithful-widgets');
    expect(await seriousAxeViolations(page)).toEqual([]);
  });
});
