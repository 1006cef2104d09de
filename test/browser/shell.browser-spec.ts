import { Browser } from 'playwright-core';
import request from 'supertest';
import { launchBrowser, newPage } from '../support/browser';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';

describe('web pages: serving and sign-in', () => {
  let env: TestEnvironment;
  let idp: TestIdentityProvider;
  let url: string;
  let browser: Browser;

  beforeAll(async () => {
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create(idp.env);
    url = (await env.startApi()).url;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await env.close();
    await idp.close();
  });

  it('serves each page family at its deep links with a same-origin content security policy', async () => {
    for (const path of ['/app', '/app/contacts/con_x', '/console', '/console/verify-email?token=abc']) {
      const res = await request(url).get(path).expect(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.text).toMatch(/<script type="module" src="\/(app|console)\/assets\/[\w-]+\.js">/);
    }
    const html = (await request(url).get('/app')).text;
    const script = /src="(\/app\/assets\/[\w-]+\.js)"/.exec(html)![1];
    const asset = await request(url).get(script).expect(200);
    expect(asset.headers['cache-control']).toContain('immutable');
    await request(url).get('/app/assets/missing-ABC123.js').expect(404);
    await request(url).get('/').expect(302).expect('location', '/app/');
  });

  it('signs a user in with an identity-provider token and out again', async () => {
    const page = await newPage(browser, { baseURL: url });
    await page.goto('/app');
    await page.getByLabel('Identity provider token', { exact: true }).fill(await idp.token({ sub: 'uid-shell', name: 'Ada Lovelace' }));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.getByText('Ada Lovelace').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Identity provider token', { exact: true }).waitFor();
  });

  it('shows the identity provider’s refusal of a bad token as an error on the form', async () => {
    const page = await newPage(browser, { baseURL: url });
    await page.goto('/app');
    await page.getByLabel('Identity provider token', { exact: true }).fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectAlert(page);
  });
});

async function expectAlert(page: import('playwright-core').Page) {
  const alert = page.getByRole('alert');
  await alert.waitFor();
  expect((await alert.textContent())?.length).toBeGreaterThan(5);
}
