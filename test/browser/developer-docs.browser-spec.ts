import { readFileSync } from 'node:fs';
import { Browser, Page } from 'playwright-core';
import { PROVIDER_PAGES } from '../../src/modules/developer-docs/docs-pages';
import { launchBrowser, newPage } from '../support/browser';
import { TestEnvironment } from '../support/harness';

/** Every axe-core finding, whatever its impact: the docs pages are static, so none is acceptable. */
async function axeViolations(page: Page): Promise<Array<{ id: string; impact: string; nodes: string[] }>> {
  // Through the DevTools protocol, so the page's policy (script-src 'self') does not apply to the test's script.
  if (!(await page.evaluate<boolean>('typeof window.axe === "object"')))
    await page.evaluate(readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8'));
  const result = await page.evaluate<{ passes: number; violations: Array<{ id: string; impact: string; nodes: string[] }> }>(
    `axe.run(document).then((result) => ({
      passes: result.passes.length,
      violations: result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ') + ' ' + n.failureSummary) })),
    }))`,
  );
  if (result.passes <= 5) throw new Error(`axe-core checked almost nothing (${result.passes} passing rules)`);
  return result.violations;
}

/** What has keyboard focus: its tag, text and href. */
const focused = (page: Page) =>
  page.evaluate<{ tag?: string; text?: string; href?: string | null; id?: string }>(
    `(() => {
      const el = document.activeElement;
      return { tag: el?.tagName.toLowerCase(), text: el?.textContent?.trim(), href: el?.getAttribute('href'), id: el?.id };
    })()`,
  );

describe('developer docs in a browser', () => {
  let env: TestEnvironment;
  let url: string;
  let browser: Browser;

  beforeAll(async () => {
    env = await TestEnvironment.create();
    url = (await env.startApi()).url;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await env.close();
  });

  it.each([['desktop', false] as const, ['mobile', true] as const])('has no axe-core findings on any page (%s)', async (_name, mobile) => {
    const page = await newPage(browser, { baseURL: url, mobile });
    for (const path of ['/developers', ...PROVIDER_PAGES.map((p) => `/developers/${p.slug}`), '/developers/no-such-page']) {
      await page.goto(path);
      expect({ path, violations: await axeViolations(page) }).toEqual({ path, violations: [] });
    }
  });

  it('loads without a policy violation (no inline script or style)', async () => {
    const page = await newPage(browser, { baseURL: url });
    const refused: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
    });
    await page.goto('/developers/quickstart');
    // The stylesheet applied: the skip link is moved off screen until focused.
    const top = await page.locator('.skip-link').evaluate((el) => el.getBoundingClientRect().top);
    expect(top).toBeLessThan(0);
    expect(refused).toEqual([]);
  });

  it('offers a skip link first, which moves focus to the content', async () => {
    const page = await newPage(browser, { baseURL: url });
    await page.goto('/developers/quickstart');
    await page.keyboard.press('Tab');
    expect(await focused(page)).toMatchObject({ tag: 'a', text: 'Skip to content', href: '#main' });
    const top = await page.locator('.skip-link').evaluate((el) => el.getBoundingClientRect().top);
    expect(top).toBeGreaterThanOrEqual(0);
    await page.keyboard.press('Enter');
    expect(await focused(page)).toMatchObject({ tag: 'main', id: 'main' });
  });

  it('reaches every page of the nav with the keyboard and marks the current one', async () => {
    const page = await newPage(browser, { baseURL: url });
    await page.goto('/developers');
    const reached: string[] = [];
    for (let i = 0; i < 20 && !reached.includes('/developers/errors'); i += 1) {
      await page.keyboard.press('Tab');
      const now = await focused(page);
      if (now.href) reached.push(now.href);
    }
    for (const p of PROVIDER_PAGES) {
      if (p.slug === 'errors') break;
      expect(reached).toContain(`/developers/${p.slug}`);
    }
    expect(reached).toContain('/developers/errors');
    await page.keyboard.press('Enter');
    await page.waitForURL('**/developers/errors');
    await expect(page.locator('nav[aria-label="Developer docs"] a[aria-current="page"]').textContent()).resolves.toBe('Errors');
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    expect(await page.locator('h1').count()).toBe(1);
  });

  it('lands on the entry a problem type URI names', async () => {
    const page = await newPage(browser, { baseURL: url });
    await page.goto('/developers/errors#insufficient_scope');
    const heading = page.locator('h3#insufficient_scope');
    await expect(heading.isVisible()).resolves.toBe(true);
    const inView = await page.evaluate<boolean>(
      `(() => { const box = document.getElementById('insufficient_scope').getBoundingClientRect(); return box.top > -1 && box.top < window.innerHeight / 2; })()`,
    );
    expect(inView).toBe(true);
  });
});
