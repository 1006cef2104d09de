import { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { launchBrowser, newPage, screenshot, seriousAxeViolations } from '../support/browser';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { waitFor } from '../support/wait-for';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

describe('consumer app: account page (sessions and account deletion)', () => {
  let env: TestEnvironment;
  let idp: TestIdentityProvider;
  let url: string;
  let dataSource: DataSource;
  let browser: Browser;
  const pages: Page[] = [];

  async function open(): Promise<Page> {
    const page = await newPage(browser, { baseURL: url });
    pages.push(page);
    return page;
  }

  async function signIn(page: Page, who: { sub: string; name: string; email: string }): Promise<string> {
    await page.goto('/app');
    await page.getByLabel('Identity provider token', { exact: true }).fill(await idp.token(who));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
    return page.evaluate<string>("JSON.parse(localStorage.getItem('soul.app.session')).user.id");
  }

  /** Another session of the same person, opened from Firefox through the API; answers its bearer header. */
  async function signInElsewhere(who: { sub: string; name: string; email: string }): Promise<{ authorization: string }> {
    const res = await request(url)
      .post('/v1/auth/login')
      .set('user-agent', FIREFOX)
      .send({ firebase_token: await idp.token(who) })
      .expect(200);
    return { authorization: `Bearer ${res.body.token as string}` };
  }

  /**
   * The session check refuses these credentials at once: the instance that
   * revoked the sessions dropped them from its own session cache after the
   * commit (the guard checks sessions with its own application's cache).
   */
  const refused = async (auth: { authorization: string }) => {
    await request(url).get('/v1/me').set(auth).expect(401);
  };

  async function goToAccount(page: Page): Promise<void> {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
  }

  beforeAll(async () => {
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create(idp.env);
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(DataSource);
    // The worker finishes account deletions.
    await env.startWorker();
    browser = await launchBrowser();
  });

  afterAll(async () => {
    for (const page of pages) await page.context().close();
    await browser?.close();
    await env?.close();
    await idp?.close();
  });

  it('lists the sessions with this browser marked, and signs another session out through a confirmation dialog', async () => {
    const who = { sub: 'uid-account-sessions', name: 'Grace Hopper', email: 'grace.account@example.com' };
    const page = await open();
    await signIn(page, who);
    const elsewhere = await signInElsewhere(who);

    await goToAccount(page);
    const sessions = page.getByRole('list', { name: 'Sessions' });
    await sessions.getByRole('heading', { name: /Firefox on Linux/ }).waitFor();
    const mine = sessions.getByRole('listitem').filter({ hasText: 'This browser' });
    expect(await mine.getByRole('heading').textContent()).toContain('Chrome on Linux');
    expect(await sessions.getByRole('listitem').count()).toBe(2);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'app-account');

    // Cancelling changes nothing.
    await page.getByRole('button', { name: 'Sign out Firefox on Linux' }).click();
    const dialog = page.getByRole('dialog', { name: 'Sign out Firefox on Linux?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await request(url).get('/v1/me').set(elsewhere).expect(200);

    await page.getByRole('button', { name: 'Sign out Firefox on Linux' }).click();
    await dialog.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('Signed out Firefox on Linux.').waitFor();
    await refused(elsewhere);
    await sessions.getByRole('heading', { name: /Firefox on Linux/ }).waitFor({ state: 'detached' });
    expect(await sessions.getByRole('listitem').count()).toBe(1);
  });

  it('signs out all other sessions and keeps this browser signed in', async () => {
    const who = { sub: 'uid-account-others', name: 'Ada Lovelace', email: 'ada.account@example.com' };
    const page = await open();
    await signIn(page, who);
    const first = await signInElsewhere(who);
    const second = await signInElsewhere(who);

    await goToAccount(page);
    await page.getByRole('button', { name: 'Sign out all other sessions…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Sign out all other sessions?' });
    await dialog.getByRole('button', { name: 'Sign out other sessions' }).click();
    await page.getByText('Signed out 2 other sessions.').waitFor();
    await refused(first);
    await refused(second);
    await page.getByRole('heading', { level: 1, name: 'Account' }).waitFor();
    expect(await page.getByRole('list', { name: 'Sessions' }).getByRole('listitem').count()).toBe(1);
  });

  it('deletes the account by keyboard through the dialog: Escape cancels and returns focus, typing DELETE confirms, the app signs out and says so', async () => {
    const who = { sub: 'uid-account-delete', name: 'Hedy Lamarr', email: 'hedy.account@example.com' };
    const page = await open();
    const userId = await signIn(page, who);
    const elsewhere = await signInElsewhere(who);
    await goToAccount(page);

    const opener = page.getByRole('button', { name: 'Delete my account…' });
    await opener.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Delete your account permanently?' });
    await dialog.waitFor();
    // Focus moved into the dialog, on its first field.
    await page.waitForFunction("document.activeElement?.closest('dialog')?.open === true");
    expect(await page.evaluate<string>('document.activeElement.getAttribute("name")')).toBe('confirm');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'app-account-delete');

    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Delete my account…');
    await request(url).get('/v1/me').set(elsewhere).expect(200);

    // Confirming without typing DELETE deletes nothing.
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.type('delete');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Delete my account');
    await page.keyboard.press('Enter');
    await dialog.getByText('Type DELETE in capital letters to confirm.').waitFor();
    await request(url).get('/v1/me').set(elsewhere).expect(200);

    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('DELETE');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');

    await page.getByRole('heading', { level: 2, name: 'Sign in' }).waitFor();
    await page.getByText('Your account is being deleted').waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await refused(elsewhere);
    await waitFor(
      async () =>
        (await dataSource.query(`SELECT erased_at FROM account_deletions WHERE user_id = $1`, [userId]))[0]?.erased_at ?? undefined,
      { what: 'the erasure' },
    );
    expect(await dataSource.query(`SELECT id FROM users WHERE id = $1`, [userId])).toEqual([]);
  });
});
