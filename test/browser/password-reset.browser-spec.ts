import { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { launchBrowser, newPage, screenshot, seriousAxeViolations } from '../support/browser';
import { TestEnvironment } from '../support/harness';
import { DEVELOPER_PASSWORD, onboardDeveloper } from '../support/providers';
import { ReceivedMail, SmtpSink } from '../support/smtp-sink';
import { waitFor } from '../support/wait-for';

const EMAIL = 'forgetful-dev@example.com';
const NEW_PASSWORD = 'a brand new passphrase for the console';

/** The console path of the link in a reset mail. */
function resetPath(mail: ReceivedMail): string {
  const link = /(\S+\/console\/reset-password\?token=\S+)/.exec(mail.text)?.[1];
  if (!link) throw new Error(`no console reset link in: ${mail.text}`);
  const { pathname, search } = new URL(link);
  return pathname + search;
}

/**
 * A developer who forgot the password, through the console pages only and the
 * keyboard only, in headless Chromium against the real api and worker and a
 * real SMTP sink: "Forgot password?" on the login page, the request form, the
 * link from the mail, the new password twice, and a login with it.
 */
describe('developer console: password reset', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let url: string;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url });
    url = (await env.startApi()).url;
    await env.startWorker();
    browser = await launchBrowser();
    page = await newPage(browser, { baseURL: url });
    await onboardDeveloper(url, smtp, EMAIL);
  });
  afterAll(async () => {
    await browser?.close();
    await env?.close();
    await smtp?.close();
  });

  /** The `index`-th reset mail to the developer (other mails, like the changed-password notice, arrive in between). */
  const resetMail = (index: number) =>
    waitFor(() => smtp.messages.filter((m) => m.to.includes(EMAIL) && m.subject.startsWith('Reset your'))[index], {
      what: `reset mail #${index + 1}`,
    });
  const heading = (p: Page, name: string | RegExp) => p.getByRole('heading', { name, level: 1 });
  const focusedText = (p: Page) => p.evaluate<string>('document.activeElement?.textContent ?? ""');
  const focusedName = (p: Page) => p.evaluate<string>('document.activeElement?.getAttribute("name") ?? ""');

  it('reaches the request form from the login page by keyboard and asks for a link', async () => {
    await page.goto('/console');
    await heading(page, 'Log in').waitFor();
    await page.getByLabel('Email', { exact: true }).focus();
    // Email, password, the Log in button, then the link.
    for (let i = 0; i < 3; i += 1) await page.keyboard.press('Tab');
    expect(await focusedText(page)).toBe('Forgot password?');
    await page.keyboard.press('Enter');

    await heading(page, 'Reset your password').waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.getByLabel('Email', { exact: true }).focus();
    await page.keyboard.type(EMAIL);
    await page.keyboard.press('Enter');
    const sent = page.getByRole('status').filter({ hasText: 'link to choose a new password' });
    await sent.waitFor();
    expect(await sent.textContent()).toContain(EMAIL);
    expect(await page.evaluate<string>('document.activeElement?.id ?? ""')).toBe('main');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'console-forgot-password');
  });

  it('follows the link from the mail, refuses two different passwords, sets the new one and logs in with it', async () => {
    const link = resetPath(await resetMail(0));
    await page.goto(link);
    await heading(page, 'Choose a new password').waitFor();
    // The token leaves the address bar (and so the history and any Referer) at once.
    await page.waitForURL((current) => !current.search.includes('token'));
    expect(await seriousAxeViolations(page)).toEqual([]);

    await page.getByLabel('New password', { exact: true }).focus();
    await page.keyboard.type(NEW_PASSWORD);
    await page.keyboard.press('Tab');
    await page.keyboard.type(NEW_PASSWORD + ' typo');
    await page.keyboard.press('Enter');
    await page.getByText('The two passwords differ').waitFor();
    expect(await focusedName(page)).toBe('repeat');
    expect(await page.getByLabel('Repeat the new password', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await seriousAxeViolations(page)).toEqual([]);

    // The sign-up rules hold: the API refuses a password containing the address, and the link stays usable.
    const withEmail = `my ${EMAIL} password`;
    await page.getByLabel('New password', { exact: true }).fill(withEmail);
    await page.getByLabel('Repeat the new password', { exact: true }).fill(withEmail);
    await page.keyboard.press('Enter');
    await page.getByRole('alert').getByText('must not contain the email address').waitFor();

    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel('Repeat the new password', { exact: true }).fill(NEW_PASSWORD);
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Your password is changed').waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'console-reset-password');

    await page.getByRole('link', { name: 'Log in' }).click();
    await heading(page, 'Log in').waitFor();
    await page.getByText('Log in with the new password').waitFor();
    await page.getByLabel('Email', { exact: true }).fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(NEW_PASSWORD);
    await page.keyboard.press('Enter');
    await heading(page, 'Overview').waitFor();
    await request(url).post('/v1/providers/auth/login').send({ email: EMAIL, password: DEVELOPER_PASSWORD }).expect(401);

    // The link is single use: opened again, it explains that and offers a new one.
    const again = await newPage(browser, { baseURL: url });
    await again.goto(link);
    await again.getByLabel('New password', { exact: true }).fill('another new passphrase');
    await again.getByLabel('Repeat the new password', { exact: true }).fill('another new passphrase');
    await again.getByRole('button', { name: 'Set the new password' }).click();
    await again.getByRole('alert').getByText('already used').waitFor();
    await again.getByRole('link', { name: 'Request a new reset link' }).waitFor();
    expect(await seriousAxeViolations(again)).toEqual([]);
    await again.context().close();
  });

  it('signs out a console open elsewhere once the password is reset', async () => {
    // The page above is signed in; another reset ends its session, and its next call signs it out.
    await request(url).post('/v1/providers/account/password/reset').send({ email: EMAIL }).expect(202);
    const link = resetPath(await resetMail(1));
    await request(url)
      .post('/v1/providers/account/password/reset/confirm')
      .send({ token: new URL(link, url).searchParams.get('token'), password: 'the third passphrase of the day' })
      .expect(200);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Apps' }).click();
    await heading(page, 'Log in').waitFor();
  });
});
