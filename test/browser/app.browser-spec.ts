import Redis from 'ioredis';
import { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { launchBrowser, newPage, screenshot } from '../support/browser';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { login } from '../support/users';

type Descriptor = { name: string; type: string; schema: unknown; surfaceGuidance: Record<string, unknown> };

/**
 * The banking package of the test runtime, narrowed to what the home page
 * shows: the balance (state, on home_widgets and the daily brief), a transfer
 * (action, confirmed by the user, on home_widgets) and the live ticker
 * (realtime, on home_widgets).
 */
function homeCapabilities(): unknown[] {
  return (goodPackageCapabilities() as Descriptor[])
    .filter((c) => ['balance', 'transfer', 'ticker'].includes(c.name))
    .map((c) =>
      c.name === 'transfer'
        ? { ...c, surfaceGuidance: { intent: 'actionable_insight', placement: ['home_widgets'], preferredComponents: ['action_row'] } }
        : c.name === 'balance'
          ? // Widgets are polled with the schema's defaults only (docs/components.md): the balance widget needs a default account.
            { ...c, schema: withDefaultAccount(c.schema) }
          : c,
    );
}

function withDefaultAccount(schema: unknown): unknown {
  const s = schema as { properties: { account: Record<string, unknown> } };
  return { ...s, properties: { ...s.properties, account: { ...s.properties.account, default: 'checking' } } };
}

describe('consumer app pages', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let browser: Browser;
  let slug: string;
  const pages: Page[] = [];

  async function open(options: { mobile?: boolean } = {}): Promise<Page> {
    const page = await newPage(browser, { baseURL: url, ...options });
    pages.push(page);
    return page;
  }

  async function signIn(page: Page, who: { sub: string; name: string; email: string }): Promise<void> {
    await page.goto('/app');
    await page.getByLabel('Identity provider token', { exact: true }).fill(await idp.token(who));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
  }

  /** The id of the contact the signed-in user of `page` has for Ada (what Grace sends to). */
  async function graceContactOfAda(page: Page): Promise<string> {
    const token = await page.evaluate<string>("JSON.parse(localStorage.getItem('soul.app.session')).token");
    const list = await request(url)
      .get('/v1/contacts')
      .set({ authorization: `Bearer ${token}` })
      .expect(200);
    return (list.body.contacts as Array<{ id: string; name: string }>).find((c) => c.name === 'Ada')!.id;
  }

  /** Follows a link of the main navigation (opening the menu first at mobile width). */
  async function go(page: Page, label: string): Promise<void> {
    const menu = page.getByRole('button', { name: 'Menu' });
    if (await menu.isVisible()) await menu.click();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: label, exact: true }).click();
  }

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start({ capabilities: homeCapabilities() });
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
    url = (await env.startApi()).url;
    // The worker delivers messages (outbox), polls state capabilities, holds realtime streams and builds exports.
    await env.startWorker({ env: { RUNTIME_TICK_MS: '250' } });

    const developer = await onboardDeveloper(url, smtp, 'pages@example.com');
    const app = await registerApp(url, developer);
    const auth = { authorization: `Bearer ${await appToken(url, app)}` };
    ({ slug } = await publishPackage(url, auth, {
      appId: app.id,
      name: 'Acme Bank',
      slug: 'acme-bank',
      description: 'Your balance, transfers and a live exchange rate',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      capabilities: homeCapabilities(),
    }));
    // Conformance called the runtime while publishing; from here on every call is the pages' doing.
    runtime.clearRequests();
    browser = await launchBrowser();
  });

  afterAll(async () => {
    for (const page of pages) await page.context().close();
    await browser?.close();
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  it('installs a package from the marketplace, shows its widgets live, runs its action only after confirmation, and uninstalls it', async () => {
    const page = await open();
    await signIn(page, { sub: 'uid-app-home', name: 'Hedy Lamarr', email: 'hedy@example.com' });
    await page.getByText('No widgets yet').waitFor();

    await go(page, 'Marketplace');
    await page.getByRole('heading', { level: 1, name: 'Marketplace' }).waitFor();
    await page.getByLabel('Search packages', { exact: true }).fill('bank');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('heading', { name: 'Results for “bank”' }).waitFor();
    await screenshot(page, 'app-marketplace');
    await page.getByRole('link', { name: 'Acme Bank' }).click();
    await page.getByRole('heading', { level: 1, name: 'Acme Bank' }).waitFor();
    await page.getByText('Does things for you after you confirm').waitFor();
    // Installing needs the consent box.
    await page.getByRole('button', { name: 'Install Acme Bank' }).click();
    expect(
      await page
        .getByLabel(/I allow Acme Bank these permissions/)
        .evaluate((box) => (box as unknown as { validity: { valid: boolean } }).validity.valid),
    ).toBe(false);
    await page.getByLabel(/I allow Acme Bank these permissions/).check();
    await page.getByRole('button', { name: 'Install Acme Bank' }).click();
    await page.getByText('Acme Bank is installed.').waitFor();

    await page.getByRole('link', { name: 'See its widgets on your home page' }).click();
    const widgets = page.getByRole('region', { name: 'Your widgets' });
    // The worker's first poll of the state capability fills the cache; the page fetches the surface again until it has data.
    const balance = widgets.getByRole('region', { name: 'Balance (Acme Bank)' });
    await balance.getByText(/1,520\.75/).waitFor({ timeout: 20_000 });
    await balance.getByText('EUR').waitFor();
    // The ticker streams over the gateway: capability.data updates the sparkline without a reload.
    const ticker = widgets.getByRole('region', { name: 'Ticker (Acme Bank)' });
    await ticker.getByText('Live', { exact: true }).waitFor({ timeout: 20_000 });
    expect(await ticker.getByRole('img').getAttribute('aria-label')).toMatch(/^Ticker \(Acme Bank\)/);
    // Provider data is untrusted: odd shapes and markup arrive as text, never as elements, and break nothing.
    const token = await page.evaluate<string>("JSON.parse(localStorage.getItem('soul.app.session')).token");
    const installs = await request(url)
      .get('/v1/installs')
      .set({ authorization: `Bearer ${token}` })
      .expect(200);
    // Any img, script or iframe that appears from here on would be provider data turned into markup.
    await page.evaluate(`window.injected = false;
      new MutationObserver((records) => {
        for (const record of records)
          for (const node of record.addedNodes)
            if (node instanceof Element && (node.matches('img, script, iframe') || node.querySelector('img, script, iframe')))
              window.injected = true;
      }).observe(document.body, { childList: true, subtree: true });`);
    const publisher = new Redis(env.env.REDIS_URL);
    try {
      const channel = `${env.env.REDIS_PREFIX}:capability:${installs.body.installs[0].id as string}:ticker`;
      for (const data of [
        '<img src=x onerror="document.title=1">',
        null,
        [1, 'two', { three: 3 }],
        { rate: 'NaN', nested: { deep: [[]] } },
        true,
      ]) {
        await publisher.publish(channel, JSON.stringify({ type: 'data', data }));
      }
      // Live data after the odd payloads still renders.
      await ticker.getByText('latest').waitFor();
      await publisher.publish(channel, JSON.stringify({ type: 'data', data: { pair: 'EURUSD', rate: 1.5 } }));
      await ticker.getByRole('img', { name: /highest 1\.5$/ }).waitFor();
    } finally {
      publisher.disconnect();
    }
    expect(await page.evaluate('window.injected')).toBe(false);
    // The balance is placed on the home widgets and in the daily brief: the brief does not repeat a home widget.
    await page.getByRole('region', { name: 'Daily brief' }).getByText('Nothing in today’s brief.').waitFor();

    // No action reaches the runtime without the user's click and confirmation.
    expect(runtime.requestsTo('/capabilities/transfer/execute')).toHaveLength(0);
    const transfer = widgets.getByRole('region', { name: 'Transfer (Acme Bank)' });
    await transfer.getByLabel('Amount', { exact: true }).fill('42.5');
    await transfer.getByRole('button', { name: 'Transfer…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Confirm: Transfer' });
    await dialog.waitFor();
    await dialog.getByText('Nothing happens until you confirm.').waitFor();
    await dialog.getByText('42.5').waitFor();
    expect(runtime.requestsTo('/capabilities/transfer/execute')).toHaveLength(0);
    await screenshot(page, 'app-action-confirm');
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await transfer.getByRole('status').getByText('Transfer sent.').waitFor();
    await dialog.waitFor({ state: 'hidden' });
    const calls = runtime.requestsTo('/capabilities/transfer/execute');
    expect(calls).toHaveLength(1);
    expect(calls[0].body).toMatchObject({ mode: 'action', input: { amount: 42.5, currency: 'EUR', toAccount: 'DE89370400440532013000' } });
    await screenshot(page, 'app-home');

    // Cancelling a second one never calls the runtime.
    await transfer.getByRole('button', { name: 'Transfer…' }).click();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await transfer.getByText('Transfer cancelled. Nothing was sent to Acme Bank.').waitFor();
    expect(runtime.requestsTo('/capabilities/transfer/execute')).toHaveLength(1);

    await go(page, 'Marketplace');
    await page.getByRole('link', { name: 'Acme Bank' }).click();
    // None of its capabilities is placed in the service context; the package page still shows its widgets and data.
    await page
      .getByRole('region', { name: 'Acme Bank for you' })
      .getByRole('region', { name: 'Balance (Acme Bank)' })
      .getByText(/1,520\.75/)
      .waitFor();
    await page.getByRole('button', { name: 'Uninstall' }).click();
    const uninstall = page.getByRole('dialog', { name: 'Uninstall Acme Bank?' });
    await uninstall.getByRole('button', { name: 'Uninstall' }).click();
    await page.getByText('Acme Bank was uninstalled.').waitFor();
    await page.getByRole('button', { name: 'Install Acme Bank' }).waitFor();
    await go(page, 'Home');
    await page.getByText('No widgets yet').waitFor();
  });

  it('lets two users add each other and chat live, with presence, without reloading', async () => {
    const ada = await open();
    // Keeps the page's WebSockets reachable, so the test can drop the connection like a network failure would.
    await ada.addInitScript(`window.sockets = [];
      window.WebSocket = class extends WebSocket {
        constructor(...args) {
          super(...args);
          window.sockets.push(this);
        }
      };`);
    const grace = await open();
    await signIn(ada, { sub: 'uid-app-ada', name: 'Ada Lovelace', email: 'ada@example.com' });
    await signIn(grace, { sub: 'uid-app-grace', name: 'Grace Hopper', email: 'grace@example.com' });

    const addContact = async (page: Page, name: string, email: string) => {
      await go(page, 'Contacts');
      await page.getByLabel('Name', { exact: true }).fill(name);
      await page.getByLabel('Email (optional)', { exact: true }).fill(email);
      await page.getByRole('button', { name: 'Add contact' }).click();
      await page.getByText(`${name} was added.`).waitFor();
      await page.getByRole('heading', { name, exact: true }).waitFor();
    };
    await addContact(ada, 'Grace', 'grace@example.com');
    await addContact(grace, 'Ada', 'ada@example.com');
    // Now they are mutual contacts: Grace's list shows Ada's presence.
    await grace
      .getByRole('listitem')
      .filter({ has: grace.getByRole('heading', { name: 'Ada', exact: true }) })
      .getByText('Online')
      .waitFor();
    await ada.getByText('Relationship score').first().waitFor();

    await ada.getByRole('link', { name: 'Message Grace' }).click();
    await ada.getByRole('heading', { level: 1, name: 'Grace', exact: true }).waitFor();
    await grace.getByRole('link', { name: 'Message Ada' }).click();
    await grace.getByRole('heading', { level: 1, name: 'Ada', exact: true }).waitFor();
    await ada.locator('.page-title').getByText('Online').waitFor();
    await grace.locator('.page-title').getByText('Online').waitFor();

    await ada.getByLabel('Message to Grace', { exact: true }).fill('Hello Grace, shall we review the compiler?');
    await ada.getByRole('button', { name: 'Send' }).click();
    await ada.getByRole('log').getByText('Hello Grace, shall we review the compiler?').waitFor();
    await grace.getByRole('log', { name: 'Messages with Ada' }).getByText('Hello Grace, shall we review the compiler?').waitFor();

    await grace.getByLabel('Message to Ada', { exact: true }).fill('Yes, after lunch.');
    await ada.getByText('Grace is typing…').waitFor();
    await grace.getByLabel('Message to Ada', { exact: true }).press('Enter');
    await ada.getByRole('log', { name: 'Messages with Grace' }).getByText('Yes, after lunch.').waitFor();
    // Grace's page reported Ada's message read over the gateway.
    await ada.getByRole('log').getByText('Read', { exact: true }).waitFor();
    await screenshot(ada, 'app-conversation');

    // The connection drops; a message sent meanwhile arrives after the reconnect (backoff, then since/sync), still without a reload.
    await ada.evaluate('window.sockets.forEach((socket) => socket.close())');
    await request(url)
      .post('/v1/messages')
      .set({ authorization: `Bearer ${await grace.evaluate<string>("JSON.parse(localStorage.getItem('soul.app.session')).token")}` })
      .send({ recipient_id: await graceContactOfAda(grace), content: 'Sent while you were offline.' })
      .expect(201);
    await ada.getByRole('log', { name: 'Messages with Grace' }).getByText('Sent while you were offline.').waitFor();
    expect(await ada.evaluate<number>('window.sockets.length')).toBeGreaterThan(1);
  });

  it('edits and deletes a contact and manages a group', async () => {
    const page = await open();
    await signIn(page, { sub: 'uid-app-contacts', name: 'Margaret Hamilton', email: 'margaret@example.com' });
    await go(page, 'Contacts');
    for (const name of ['Temp', 'Jean']) {
      await page.getByLabel('Name', { exact: true }).fill(name);
      await page.getByRole('button', { name: 'Add contact' }).click();
      await page.getByText(`${name} was added.`).waitFor();
    }
    await page.getByRole('button', { name: 'Edit Temp' }).click();
    const form = page.getByRole('form', { name: 'Edit Temp' });
    await form.getByLabel('Name', { exact: true }).fill('Temporary');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'Temporary', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Delete Temporary' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete Temporary?' });
    await dialog.getByRole('button', { name: 'Delete contact' }).click();
    await page.getByRole('heading', { name: 'Temporary', exact: true }).waitFor({ state: 'detached' });
    await page.getByText('1 contact, closest first.').waitFor();

    await go(page, 'Groups');
    await page.getByLabel('Group name', { exact: true }).fill('Apollo');
    await page.getByLabel('Jean', { exact: true }).check();
    await page.getByRole('button', { name: 'Create group' }).click();
    const group = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Apollo' }) });
    await group.getByText('Jean').waitFor();
    await page.getByRole('button', { name: 'Delete group Apollo' }).click();
    await page.getByRole('dialog', { name: 'Delete the group Apollo?' }).getByRole('button', { name: 'Delete group' }).click();
    await page.getByText('No groups yet.').waitFor();
  });

  it('pages back through a long conversation with the cursor', async () => {
    const who = { sub: 'uid-app-pager', name: 'Frances Allen', email: 'frances@example.com' };
    const user = await login(url, idp, who);
    const contact = await request(url).post('/v1/contacts').set(user.auth).send({ name: 'Archive' }).expect(201);
    for (let i = 1; i <= 35; i += 1) {
      await request(url)
        .post('/v1/messages')
        .set(user.auth)
        .send({ recipient_id: contact.body.id, content: `Note number ${i}.` })
        .expect(201);
    }
    const page = await open();
    await signIn(page, who);
    await page.goto(`/app/contacts/${contact.body.id as string}`);
    const log = page.getByRole('log', { name: 'Messages with Archive' });
    await log.getByText('Note number 35.').waitFor();
    expect(await log.getByText('Note number 1.', { exact: true }).count()).toBe(0);
    await page.getByRole('button', { name: 'Load older messages' }).click();
    await log.getByText('Note number 1.', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Load older messages' }).waitFor({ state: 'detached' });
    expect(await log.getByRole('listitem').count()).toBe(35);
  });

  it('shows the soul record, exports it as a download and deletes it after a confirmation that says it is permanent', async () => {
    const page = await open();
    await signIn(page, { sub: 'uid-app-soul', name: 'Katherine Johnson', email: 'katherine@example.com' });
    await go(page, 'Soul');
    await page.getByRole('heading', { level: 1, name: 'Soul record' }).waitFor();
    await page.getByRole('heading', { name: 'Traits' }).waitFor();

    await page.getByRole('button', { name: 'Edit traits and values' }).click();
    await page.getByLabel('Communication style', { exact: true }).selectOption('analytical');
    await page.getByLabel('Values', { exact: true }).fill('curiosity\nprecision');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('analytical').waitFor();
    await page.getByRole('listitem').getByText('precision').waitFor();

    await page.getByRole('button', { name: 'Request export' }).click();
    const link = page.getByRole('link', { name: /^Download / });
    await link.waitFor({ timeout: 20_000 });
    expect(await link.getAttribute('href')).toMatch(/^blob:/);
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toMatch(/\.json$/);
    await screenshot(page, 'app-soul');

    await page.getByRole('button', { name: 'Delete soul record…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete your soul record permanently?' });
    await dialog.getByText('This is permanent and cannot be undone.').waitFor();
    await dialog.getByRole('button', { name: 'Delete permanently' }).click();
    await page.getByRole('status').getByText('permanently deleted').waitFor();
    await page.getByText('You have no soul record any more.').waitFor();
  });

  it('marks a widget whose provider answered with partial data', async () => {
    const who = { sub: 'uid-app-degraded', name: 'Annie Easley', email: 'annie@example.com' };
    runtime.scriptNext({
      status: 200,
      body: { status: 'degraded', data: { available: 1500 }, error: { type: 'partial', detail: 'currency unknown', retryable: true } },
    });
    const page = await open();
    await signIn(page, who);
    const user = await login(url, idp, who);
    const pkg = await request(url).get(`/v1/marketplace/packages/${slug}`).set(user.auth).expect(200);
    await request(url).post('/v1/installs').set(user.auth).send({ package_id: pkg.body.id }).expect(201);
    await page.reload();
    const balance = page.getByRole('region', { name: 'Your widgets' }).getByRole('region', { name: 'Balance (Acme Bank)' });
    await balance.getByText('Partial data').waitFor({ timeout: 20_000 });
    await balance.getByText(/1,500/).waitFor();
    await request(url)
      .delete(`/v1/installs/${(await request(url).get('/v1/installs').set(user.auth)).body.installs[0].id}`)
      .set(user.auth)
      .expect(200);
  });

  it('asks the agent to draft an email', async () => {
    const page = await open();
    await signIn(page, { sub: 'uid-app-agent', name: 'Dorothy Vaughan', email: 'dorothy@example.com' });
    await go(page, 'Agent');
    await page.getByLabel('To', { exact: true }).fill('team@example.com');
    await page.getByLabel('Subject', { exact: true }).fill('Fortran class');
    await page.getByLabel('What should it say?', { exact: true }).fill('invite the team to the Fortran class on Friday');
    await page.getByRole('button', { name: 'Draft email' }).click();
    const draft = page.getByRole('textbox', { name: 'Draft (edit and copy)' });
    await draft.waitFor({ timeout: 20_000 });
    expect(await draft.inputValue()).toMatch(/Fortran/);
  });

  it('is usable at 390 px: the menu opens, widgets fit the width', async () => {
    const who = { sub: 'uid-app-mobile', name: 'Mary Jackson', email: 'mary@example.com' };
    const page = await open({ mobile: true });
    await signIn(page, who);
    const user = await login(url, idp, who);
    const pkg = await request(url).get(`/v1/marketplace/packages/${slug}`).set(user.auth).expect(200);
    await request(url).post('/v1/installs').set(user.auth).send({ package_id: pkg.body.id }).expect(201);
    await page.reload();
    const widgets = page.getByRole('region', { name: 'Your widgets' });
    await widgets
      .getByRole('region', { name: 'Balance (Acme Bank)' })
      .getByText(/1,520\.75/)
      .waitFor({ timeout: 20_000 });
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'app-mobile-home');
    for (const [link, title] of [
      ['Contacts', 'Contacts'],
      ['Marketplace', 'Marketplace'],
      ['Soul', 'Soul record'],
      ['Agent', 'Agent'],
    ]) {
      await go(page, link);
      await page.getByRole('heading', { level: 1, name: title, exact: true }).waitFor();
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    }
  });
});
