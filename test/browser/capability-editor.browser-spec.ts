import { Browser, Locator, Page } from 'playwright-core';
import request from 'supertest';
import { launchBrowser, newPage, screenshot, seriousAxeViolations } from '../support/browser';
import { TestEnvironment } from '../support/harness';
import { ProviderRuntime } from '../support/provider-runtime';
import { DEVELOPER_PASSWORD, onboardDeveloper, OnboardedDeveloper, registerApp, RegisteredApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';

/**
 * The capability editor of the console (issue 24, "A console that guides"): a form beside the JSON view, both the
 * same descriptor, the service's errors beside the fields they name, and a live preview drawn by /app's own widget
 * renderer from the example response. Against the real api, with a real HTTPS provider runtime's URL.
 */
describe('developer console: the capability editor and its live preview', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let runtime: ProviderRuntime;
  let url: string;
  let browser: Browser;
  let page: Page;
  let developer: OnboardedDeveloper;
  let app: RegisteredApp;
  let packageId = '';

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url });
    url = (await env.startApi()).url;
    // The worker sends the verification mail (outbox).
    await env.startWorker();
    developer = await onboardDeveloper(url, smtp, 'editor-dev@example.com');
    app = await registerApp(url, developer);
    browser = await launchBrowser();
    page = await newPage(browser, { baseURL: url });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await env?.close();
    await runtime?.close();
    await smtp?.close();
  });

  const heading = (p: Page, name: string | RegExp, level = 1) => p.getByRole('heading', { name, level });
  const jsonView = () => page.getByLabel('Package descriptor (JSON)', { exact: true });
  const card = (index: number) => page.getByRole('region', { name: new RegExp(`^Capability ${index}: `) });
  const jsonValue = async () =>
    JSON.parse(await jsonView().inputValue()) as Record<string, unknown> & { capabilities: Array<Record<string, unknown>> };

  /** Types into a field with the keyboard, replacing what it held. */
  async function type(field: Locator, text: string) {
    await field.focus();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.type(text);
  }

  async function logIn(p: Page) {
    await p.goto('/console/login');
    await heading(p, 'Log in').waitFor();
    await p.getByLabel('Email', { exact: true }).fill(developer.email);
    await p.getByLabel('Password', { exact: true }).fill(DEVELOPER_PASSWORD);
    await p.getByRole('button', { name: 'Log in' }).click();
    await heading(p, 'Overview').waitFor();
  }

  const capability = {
    type: 'state',
    name: 'queue_stats',
    description: 'Open tickets of the support queue right now.',
    schema: { type: 'object', properties: { queue: { type: 'string', default: 'support' } } },
    refreshInterval: 60,
    surfaceGuidance: {
      intent: 'ambient_context',
      placement: ['home_widgets'],
      preferredComponents: ['stat_row', 'sparkline'],
      title: 'Open tickets',
      fields: {
        open: { label: 'Open now', unit: 'tickets', format: 'integer' },
        history: { label: 'Open tickets, last 24 h' },
      },
    },
    examples: [{ params: { queue: 'support' }, response: { open: 12, history: [9, 11, 14, 12] } }],
    responseSchema: {
      type: 'object',
      properties: { open: { type: 'integer' }, history: { type: 'array', items: { type: 'integer' } } },
      required: ['open'],
    },
  };

  it('fills the package and a state capability in the form by keyboard, and the JSON view says the same', async () => {
    await logIn(page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Packages' }).click();
    await page.getByRole('link', { name: 'Create a package' }).click();
    await heading(page, 'Create a package').waitFor();

    await type(page.getByLabel('Package name', { exact: true }), 'Queue Desk');
    await type(page.getByLabel('Slug', { exact: true }), 'queue-desk');
    await type(page.getByLabel('Package description', { exact: true }), 'Support queue figures of Queue Desk.');
    await page.getByLabel('Risk tier', { exact: true }).selectOption('data_only');
    await type(page.getByLabel('Runtime URL', { exact: true }), runtime.url);

    // The template's capability goes; a new state capability comes.
    await page.getByRole('button', { name: 'Remove capability balance' }).click();
    await page.getByText('No capability yet').waitFor();
    await page.getByLabel('Mode of the new capability', { exact: true }).selectOption('state');
    await page.getByRole('button', { name: 'Add capability' }).focus();
    await page.keyboard.press('Enter');
    const first = card(1);
    await first.waitFor();

    await type(first.getByLabel('Name', { exact: true }), capability.name);
    await heading(page, 'Capability 1: queue_stats', 3).waitFor();
    await type(first.getByLabel('Description', { exact: true }), capability.description);
    await type(first.getByLabel('Refresh interval (seconds)', { exact: true }), '60');
    await first.getByLabel('Params schema (JSON)', { exact: true }).fill(JSON.stringify(capability.schema));
    await first.getByLabel('Response schema (JSON)', { exact: true }).fill(JSON.stringify(capability.responseSchema));
    await first.getByLabel('Example params (JSON)', { exact: true }).fill(JSON.stringify(capability.examples[0].params));
    await first.getByLabel('Example response (JSON)', { exact: true }).fill(JSON.stringify(capability.examples[0].response));
    await type(first.getByLabel('Widget title', { exact: true }), 'Open tickets');
    // Keyboard: Space on a checkbox takes progress_bar out of the preferred components.
    await first.getByRole('group', { name: 'Preferred components' }).getByLabel('progress_bar', { exact: true }).focus();
    await page.keyboard.press('Space');
    await first.getByRole('button', { name: 'Add fields of the example (open, history)' }).click();
    await type(first.getByLabel('Label of open', { exact: true }), 'Open now');
    await type(first.getByLabel('Unit of open', { exact: true }), 'tickets');
    await first.getByLabel('Format of open', { exact: true }).selectOption('integer');
    await type(first.getByLabel('Label of history', { exact: true }), 'Open tickets, last 24 h');

    const json = await jsonValue();
    expect(json).toEqual({
      name: 'Queue Desk',
      slug: 'queue-desk',
      description: 'Support queue figures of Queue Desk.',
      riskTier: 'data_only',
      runtimeUrl: runtime.url,
      version: '1.0.0',
      capabilities: [capability],
    });
  });

  it('follows the JSON view in the form, and says so while the JSON does not parse', async () => {
    const edited = await jsonValue();
    const guidance = edited.capabilities[0].surfaceGuidance as Record<string, unknown>;
    guidance.title = 'Open tickets now';
    (edited.capabilities[0].examples as Array<Record<string, unknown>>)[0].params = { queue: 'billing' };
    await jsonView().fill(JSON.stringify(edited, null, 2).replace('"Queue Desk"', '"Queue Desk'));
    await page.getByRole('status').getByText('The JSON view does not parse').waitFor();
    expect(await card(1).getByLabel('Widget title', { exact: true }).isDisabled()).toBe(true);
    expect(await card(1).getByLabel('Widget title', { exact: true }).inputValue()).toBe('Open tickets');

    await jsonView().fill(JSON.stringify(edited, null, 2));
    await page.getByText('The JSON view does not parse').waitFor({ state: 'detached' });
    expect(await card(1).getByLabel('Widget title', { exact: true }).inputValue()).toBe('Open tickets now');
    expect(await card(1).getByLabel('Widget title', { exact: true }).isEnabled()).toBe(true);
    expect(JSON.parse(await card(1).getByLabel('Example params (JSON)', { exact: true }).inputValue())).toEqual({ queue: 'billing' });
  });

  it('previews the widget with /app’s renderer from the example response: a stat row and a sparkline', async () => {
    const preview = card(1).getByRole('group', { name: /Preview in \/app/ });
    const widget = preview.getByRole('region', { name: 'Open tickets now (Queue Desk)' });
    await widget.getByRole('heading', { name: 'Open tickets now', level: 3 }).waitFor();
    const stat = (label: string) => widget.locator('.stat', { has: page.locator('dt', { hasText: label }) }).locator('dd');
    expect(await stat('Open now').textContent()).toBe('12 tickets');
    expect(await stat('Open tickets, last 24 h').textContent()).toBe('9, 11, 14 +1 more');
    expect(await widget.getByRole('img').getAttribute('aria-label')).toBe(
      'Open tickets now (Queue Desk), Open tickets, last 24 h: 4 points from 9 to 12, lowest 9, highest 14',
    );
    expect(await widget.locator('.sparkline-latest').textContent()).toBe('12');
    // No progress bar: it was taken out of the preferred components.
    expect(await widget.getByRole('progressbar').count()).toBe(0);

    // The preview follows the example as it is typed (after a short pause).
    const example = card(1).getByLabel('Example response (JSON)', { exact: true });
    await example.fill(JSON.stringify({ open: 15.4, history: [9, 11, 14, 12, 15] }));
    await stat('Open now').getByText('15 tickets').waitFor();
    await widget.locator('.sparkline-latest').getByText('15').waitFor();
    await example.fill(JSON.stringify(capability.examples[0].response));
    await stat('Open now').getByText('12 tickets').waitFor();

    expect(await seriousAxeViolations(page)).toEqual([]);
    // From the top: the JSON view keeps to the top of the window as the page scrolls.
    await page.evaluate('window.scrollTo(0, 0)');
    await screenshot(page, 'console-capability-editor');
  });

  it('shows the service’s errors beside the fields they name, and lists them all', async () => {
    const good = await jsonValue();
    const broken = JSON.parse(JSON.stringify(good)) as typeof good;
    Object.assign(broken.capabilities[0], { refreshInterval: 0, colour: 'teal' });
    const refused = await request(url)
      .post('/v1/providers/packages')
      .set(developer.auth)
      .send({ ...broken, appId: app.id })
      .expect(400);
    const errors = refused.body.errors as Array<{ field: string; message: string }>;
    const interval = errors.find((e) => e.field === 'capabilities[0].refreshInterval');
    const colour = errors.find((e) => e.field === 'capabilities[0].colour');
    expect(interval).toBeDefined();
    expect(colour).toBeDefined();

    await jsonView().fill(JSON.stringify(broken, null, 2));
    expect(await card(1).getByLabel('Refresh interval (seconds)', { exact: true }).inputValue()).toBe('0');
    await page.getByRole('button', { name: 'Create package' }).click();
    await page.getByRole('list', { name: 'Errors by field' }).waitFor();
    expect(await page.getByRole('list', { name: 'Errors by field' }).getByRole('listitem').count()).toBe(errors.length);

    const intervalField = card(1).locator('.field', { has: page.getByLabel('Refresh interval (seconds)', { exact: true }) });
    expect(await intervalField.locator('.field-error').textContent()).toBe(interval!.message);
    expect(await card(1).getByLabel('Refresh interval (seconds)', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    const others = card(1).getByRole('list', { name: 'Other errors in capability 1' });
    expect(await others.textContent()).toContain(colour!.field);
    expect(await others.textContent()).toContain(colour!.message);
    expect(await seriousAxeViolations(page)).toEqual([]);
  });

  it('creates the package with exactly the descriptor of the JSON view', async () => {
    await jsonView().fill(JSON.stringify(capabilityDocument(), null, 2));
    await card(1).getByLabel('Refresh interval (seconds)', { exact: true }).waitFor();
    expect(await card(1).getByLabel('Refresh interval (seconds)', { exact: true }).inputValue()).toBe('60');
    const sent = page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname === '/v1/providers/packages');
    await page.getByRole('button', { name: 'Create package' }).click();
    expect((await sent).postDataJSON()).toEqual({ ...capabilityDocument(), appId: app.id });
    await heading(page, 'Queue Desk').waitFor();
    packageId = /\/console\/packages\/(pkg_\w+)$/.exec(page.url())![1];

    const stored = (await request(url).get(`/v1/providers/packages/${packageId}`).set(developer.auth).expect(200)).body;
    expect(stored).toMatchObject({ name: 'Queue Desk', slug: 'queue-desk', riskTier: 'data_only', appId: app.id });
    expect(stored.versions).toHaveLength(1);
    expect(stored.versions[0].version).toBe('1.0.0');
    // The stored form adds only the runtime each capability is called at.
    expect(stored.versions[0].capabilities).toEqual([{ ...capability, runtimeUrl: runtime.url }]);
  });

  it('gives a new version the same editor, starting from the latest capabilities', async () => {
    await page.getByRole('link', { name: 'New version' }).click();
    await heading(page, 'New version of Queue Desk').waitFor();
    expect(await page.getByLabel('Version', { exact: true }).inputValue()).toBe('1.0.1');
    const body = JSON.parse(await page.getByLabel('New version (JSON)', { exact: true }).inputValue()) as Record<string, unknown>;
    expect(body).toEqual({ version: '1.0.1', capabilities: [capability] });
    const widget = card(1).getByRole('region', { name: 'Open tickets (Queue Desk)' });
    await widget.locator('.stat', { hasText: 'Open now' }).getByText('12 tickets').waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
  });

  it('is clean under axe-core on a phone, the JSON view under the form', async () => {
    const mobile = await newPage(browser, { baseURL: url, mobile: true });
    try {
      await logIn(mobile);
      await mobile.goto('/console/packages/new');
      await heading(mobile, 'Create a package').waitFor();
      await mobile.getByRole('region', { name: 'Balance (Acme Bank)' }).waitFor();
      expect(await seriousAxeViolations(mobile)).toEqual([]);
      const overflow = await mobile.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow).toBeLessThanOrEqual(0);
      const order = await mobile.evaluate<number>(
        `(() => {
          const form = document.querySelector('.editor-form');
          const json = document.querySelector('textarea[name="descriptor"]');
          return form && json ? form.compareDocumentPosition(json) & Node.DOCUMENT_POSITION_FOLLOWING : 0;
        })()`,
      );
      expect(order).toBeTruthy();
    } finally {
      await mobile.context().close();
    }
  });

  function capabilityDocument() {
    return {
      name: 'Queue Desk',
      slug: 'queue-desk',
      description: 'Support queue figures of Queue Desk.',
      riskTier: 'data_only',
      runtimeUrl: runtime.url,
      version: '1.0.0',
      capabilities: [capability],
    };
  }
});
