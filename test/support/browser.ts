import { mkdirSync, readFileSync } from 'node:fs';
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

/**
 * Serious and critical axe-core findings on the page as it is now (rules of WCAG 2.0–2.2 A/AA and axe's best
 * practices), for page tests other than the chat spec (which keeps its own copy of the same check).
 */
export async function seriousAxeViolations(page: Page): Promise<Array<{ id: string; impact: string; nodes: string[] }>> {
  // Evaluated through the DevTools protocol, so the page's CSP (script-src 'self') does not apply to the test's script.
  if (!(await page.evaluate<boolean>('typeof window.axe === "object"')))
    await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  const result = await page.evaluate<{ passes: number; violations: Array<{ id: string; impact: string; nodes: string[] }> }>(
    `axe.run(document).then((result) => ({
      passes: result.passes.length,
      violations: result.violations
        .filter((v) => v.impact === 'serious' || v.impact === 'critical')
        .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ') + ' ' + n.failureSummary) })),
    }))`,
  );
  // A run that checked nothing would pass for the wrong reason.
  if (result.passes <= 5) throw new Error(`axe-core checked almost nothing (${result.passes} passing rules)`);
  return result.violations;
}
