import { Browser, BrowserContext, Page } from 'playwright-core';
import request from 'supertest';
import { ConfigError, loadConfig } from '../../src/config/app-config';
import { launchBrowser, screenshot, seriousAxeViolations } from '../support/browser';
import { TestEnvironment } from '../support/harness';

/**
 * Signing in to /app as a person does (issue 23): the development identity
 * provider's pick-or-create page instead of a pasted token, the page asked for
 * kept across sign-in, one session for every tab, plain error messages, and
 * the agent's draft page (copy, open in the mail client, regenerate). Firebase
 * sign-in needs Google's servers, which this machine cannot reach: it is
 * tested as far as the served config and the buttons.
 */
describe('consumer app sign-in', () => {
  let env: TestEnvironment;
  let url: string;
  let firebaseUrl: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  async function newContext(baseURL = url): Promise<BrowserContext> {
    const context = await browser.newContext({ baseURL, viewport: { width: 1280, height: 860 } });
    context.setDefaultTimeout(15_000);
    contexts.push(context);
    return context;
  }

  async function newTab(context: BrowserContext): Promise<Page> {
    const page = await context.newPage();
    page.on('pageerror', (error) => {
      throw new Error(`page error on ${page.url()}: ${error.message}`);
    });
    return page;
  }

  const token = (page: Page) => page.evaluate<string>("JSON.parse(localStorage.getItem('soul.app.session')).token");

  beforeAll(async () => {
    env = await TestEnvironment.create({ DEV_IDP: 'true' });
    url = (await env.startApi()).url;
    // The worker runs the agent's drafts.
    await env.startWorker();
    // A second api on the same database configured for Firebase web sign-in instead.
    firebaseUrl = (
      await env.startApi({ env: { DEV_IDP: 'false', IDP_PROJECT_ID: 'demo-soul', FIREBASE_API_KEY: 'AIzaSy-test-only-not-a-real-key' } })
    ).url;
    browser = await launchBrowser();
  });

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await browser?.close();
    await env?.close();
  });

  it('signs in through the development identity provider by creating a test user, and returns to the deep link', async () => {
    const page = await newTab(await newContext());
    await page.goto('/app/contacts');
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await page.getByRole('heading', { name: 'Welcome to Soul' }).waitFor();
    await page.getByText('First, sign in.').waitFor();
    await page.getByRole('button', { name: 'Sign in with a test user' }).waitFor();
    expect(await page.getByLabel('Identity provider token', { exact: true }).count()).toBe(0);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'app-sign-in');

    await page.getByRole('button', { name: 'Sign in with a test user' }).click();
    await page.getByRole('heading', { level: 1, name: 'Development sign-in' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dev-idp/sign-in');
    await page.getByText('No test users yet').waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.getByLabel('Name', { exact: true }).fill('Alice Example');
    await page.getByLabel('Email', { exact: true }).fill('Alice@Example.com');
    await screenshot(page, 'dev-idp-sign-in');
    await page.getByRole('button', { name: 'Create and sign in' }).click();

    await page.getByRole('heading', { level: 1, name: 'Contacts' }).waitFor();
    const landed = new URL(page.url());
    expect(landed.pathname).toBe('/app/contacts');
    // The ID token does not stay in the address bar or history.
    expect(landed.hash).toBe('');
    const me = await request(url)
      .get('/v1/me')
      .set({ authorization: `Bearer ${await token(page)}` })
      .expect(200);
    expect(me.body).toMatchObject({ name: 'Alice Example', email: 'alice@example.com' });
  });

  it('picks an existing test user on the development sign-in page', async () => {
    const page = await newTab(await newContext());
    await page.goto('/app/agent');
    await page.getByRole('button', { name: 'Sign in with a test user' }).click();
    await page.getByRole('button', { name: /Sign in as Alice Example/ }).click();
    await page.getByRole('heading', { level: 1, name: 'Agent' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/app/agent');
  });

  it('shares the session with a second tab, and signing out in one tab signs out the other', async () => {
    const context = await newContext();
    const first = await newTab(context);
    await first.goto('/app/');
    await first.getByRole('button', { name: 'Sign in with a test user' }).click();
    await first.getByLabel('Name', { exact: true }).fill('Tab Tester');
    await first.getByLabel('Email', { exact: true }).fill('tabs@example.com');
    await first.getByRole('button', { name: 'Create and sign in' }).click();
    await first.getByRole('heading', { level: 1, name: 'Home' }).waitFor();

    const second = await newTab(context);
    await second.goto('/app/groups');
    await second.getByRole('heading', { level: 1, name: 'Groups' }).waitFor();

    await first.getByRole('button', { name: 'Sign out' }).click();
    await first.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    // The other tab follows through the storage event, without a reload.
    await second.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
  });

  it('shows a plain message, never the service error, when the identity token is refused', async () => {
    const page = await newTab(await newContext());
    const messages: string[] = [];
    page.on('console', (message) => messages.push(message.text()));
    await page.goto('/app/');
    await page.evaluate("sessionStorage.setItem('soul.app.signin.state', 'state-for-the-test')");
    await page.goto('/app/contacts#id_token=not.a.token&state=state-for-the-test');
    await page.getByRole('alert').filter({ hasText: 'We could not sign you in with that account. Please try again.' }).waitFor();
    expect(await page.locator('body').innerText()).not.toMatch(/firebase_token|rejected|malformed/);
    // The detail is for developers: in the console.
    expect(messages.join('\n')).toMatch(/sign-in failed/);
    expect(new URL(page.url()).hash).toBe('');
  });

  it('refuses to send a signed-in browser anywhere but /app, and checks the state it sent', async () => {
    for (const target of ['https://evil.example/app', '//evil.example/app', '/console', '/app/\\evil']) {
      await request(url).get('/dev-idp/sign-in').query({ redirect_uri: target, state: 'state-12345' }).expect(400);
    }
    const redirect = await request(url)
      .get('/dev-idp/authorize')
      .query({ redirect_uri: '/app/contacts', state: 'state-12345', name: 'Eve', email: 'eve@example.com' })
      .expect(303);
    expect(redirect.headers.location).toMatch(/^\/app\/contacts#id_token=[\w-]+\.[\w-]+\.[\w-]+&state=state-12345$/);
    // A form mistake shows the page again with what to correct.
    const mistake = await request(url)
      .get('/dev-idp/authorize')
      .query({ redirect_uri: '/app/', state: 'state-12345', name: 'Eve', email: 'not-an-email' })
      .expect(200);
    expect(mistake.text).toContain('Enter an email address such as alice@example.com.');
    // A token the tab did not ask for (state mismatch) is ignored.
    const page = await newTab(await newContext());
    await page.goto('/app/');
    await page.evaluate("sessionStorage.setItem('soul.app.signin.state', 'the-state-this-tab-sent')");
    await page.goto(String(redirect.headers.location));
    await page.getByRole('button', { name: 'Sign in with a test user' }).waitFor();
    expect(await page.evaluate("localStorage.getItem('soul.app.session')")).toBeNull();
  });

  it('drafts an email that can be copied, opened in the mail client and regenerated', async () => {
    const context = await newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
    const page = await newTab(context);
    await page.goto('/app/agent');
    await page.getByRole('button', { name: 'Sign in with a test user' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Grace Hopper');
    await page.getByLabel('Email', { exact: true }).fill('grace@example.com');
    await page.getByRole('button', { name: 'Create and sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Agent' }).waitFor();

    await page.getByLabel('To', { exact: true }).fill('bob@example.com');
    await page.getByLabel('Subject', { exact: true }).fill('Dinner & drinks?');
    await page.getByLabel('What should it say?', { exact: true }).fill('invite Bob to dinner on Friday');
    await page.getByRole('button', { name: 'Draft email' }).click();
    const draft = page.getByLabel('Draft (edit and copy)', { exact: true });
    await draft.waitFor();
    const text = await draft.inputValue();
    expect(text).toMatch(/^Hello Bob,\n\nWould you like to come over for dinner on Friday\?/);
    expect(text).not.toContain('invite Bob');
    await screenshot(page, 'app-agent-draft');

    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByText('Draft copied to the clipboard.').waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(text);

    const href = await page.getByRole('link', { name: 'Open in mail client' }).getAttribute('href');
    expect(href).toMatch(/^mailto:bob@example\.com\?subject=Dinner%20%26%20drinks%3F&body=/);
    const mail = new URL(href!);
    expect(mail.searchParams.get('subject')).toBe('Dinner & drinks?');
    expect(mail.searchParams.get('body')).toBe(text.replace(/\n/g, '\r\n'));

    // An edit is what gets copied and mailed.
    await draft.fill(`${text}\n\nP.S. Bring the dog.`);
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toContain('P.S. Bring the dog.');

    // Regenerate after a soul change: a new draft in the new voice.
    await request(url)
      .patch('/v1/soul')
      .set({ authorization: `Bearer ${await token(page)}` })
      .send({ traits: { formality: 0.9, communication_style: 'expressive' } })
      .expect(200);
    await page.getByRole('button', { name: 'Regenerate' }).click();
    // Bounded wait for the new draft (a string waitForFunction would need eval, which the page's CSP refuses).
    for (const started = Date.now(); !(await draft.inputValue()).startsWith('Dear Bob,');) {
      if (Date.now() - started > 10_000) throw new Error(`the regenerated draft did not arrive: ${await draft.inputValue()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await draft.inputValue()).toContain('It would be a real pleasure to have you join us for dinner on Friday.');
  });

  it('offers Firebase sign-in (Google and email link) when IDP_PROJECT_ID and FIREBASE_API_KEY are set, loading the SDK only when used', async () => {
    const config = await request(firebaseUrl).get('/app/config.json').expect(200);
    expect(config.body).toEqual({
      method: 'firebase',
      firebase: { apiKey: 'AIzaSy-test-only-not-a-real-key', authDomain: 'demo-soul.firebaseapp.com', projectId: 'demo-soul' },
    });
    // The development provider is off there.
    await request(firebaseUrl).get('/dev-idp/jwks.json').expect(404);
    await request(firebaseUrl).get('/dev-idp/sign-in').query({ redirect_uri: '/app/', state: 'state-12345' }).expect(404);

    const page = await newTab(await newContext(firebaseUrl));
    const scripts: string[] = [];
    page.on('request', (req) => {
      if (req.resourceType() === 'script') scripts.push(new URL(req.url()).pathname);
    });
    await page.goto('/app/');
    await page.getByRole('button', { name: 'Continue with Google' }).waitFor();
    await page.getByRole('button', { name: 'Email me a sign-in link' }).waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    // Google cannot be reached from this machine: nothing is clicked, and the Firebase chunk has not been fetched.
    expect(scripts.some((path) => path.includes('firebase'))).toBe(false);
  });

  it('answers the config of the development sign-in, and refuses the development provider in production', async () => {
    expect((await request(url).get('/app/config.json').expect(200)).body).toEqual({
      method: 'development',
      development: { sign_in_url: '/dev-idp/sign-in' },
    });
    const jwks = await request(url).get('/dev-idp/jwks.json').expect(200);
    expect(jwks.body.keys).toEqual([expect.objectContaining({ kty: 'RSA', alg: 'RS256', use: 'sig' })]);
    expect(jwks.body.keys[0].d).toBeUndefined();

    const production = { NODE_ENV: 'production', ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'), IDP_PROJECT_ID: 'acme' };
    expect(() => loadConfig({ ...production, DEV_IDP: 'true' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...production, DEV_IDP: 'true' })).toThrow(/DEV_IDP must not be enabled when NODE_ENV=production/);
    // `npm start` passes DEV_IDP=auto: on in development without a provider, off in production and when a provider is set.
    expect(loadConfig({ DEV_IDP: 'auto' }).devIdp).toBe(true);
    expect(loadConfig({ ...production, DEV_IDP: 'auto' }).devIdp).toBe(false);
    expect(loadConfig({ DEV_IDP: 'auto', IDP_PROJECT_ID: 'acme' }).devIdp).toBe(false);
    expect(loadConfig({}).devIdp).toBe(false);
  });
});
