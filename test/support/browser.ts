import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';

/** Debian's Chromium (installed by .ci/run when missing); never a downloaded browser. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOT_DIR = join(__dirname, '../../docs/screenshots');

/**
 * Headless Chromium for the page tests. The network flags keep it from
 * calling Google's services, which this machine's closed network refuses;
 * Playwright gives every launch a fresh, empty user-data-dir.
 */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A page in its own context (own storage, like a separate person's browser). */
export async function newPage(browser: Browser, options: { baseURL: string; mobile?: boolean }): Promise<Page> {
  const context = await browser.newContext({
    baseURL: options.baseURL,
    viewport: options.mobile ? { width: 390, height: 844 } : { width: 1280, height: 860 },
    ...(options.mobile ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
  });
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  // A script error on a page fails the test that caused it, not a later assertion.
  page.on('pageerror', (error) => {
    throw new Error(`page error on ${page.url()}: ${error.message}`);
  });
  return page;
}

/** Writes docs/screenshots/<name>.png: the documentation shows what the tests saw. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}
