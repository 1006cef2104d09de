import { Browser, Page } from 'playwright-core';
import { launchBrowser, newPage } from '../support/browser';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';

/**
 * The home page's component renderers, each fed the shapes providers send
 * (and shapes they should not). The surface answer is scripted in the browser
 * so that one page shows every component at once; the service side of
 * `GET /v1/surfaces/:placement` is covered by the e2e tests and by the app
 * journey, which renders a real runtime's data.
 */
describe('web pages: home widgets rendered by component', () => {
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

  const component = (name: string, kind: string, data: unknown) => ({
    package: { id: 'pkg_widgets', name: 'Widget Works', installId: 'inst_widgets' },
    capability: { name, mode: 'state', description: `${name} for the test` },
    intent: 'ambient_context',
    component: kind,
    data,
    fetchedAt: new Date().toISOString(),
    stale: false,
  });

  async function homeWith(components: unknown[]): Promise<Page> {
    const page = await newPage(browser, { baseURL: url });
    await page.route('**/v1/surfaces/home_widgets', (route) => route.fulfill({ json: { placement: 'home_widgets', components } }));
    await page.route('**/v1/surfaces/daily_brief', (route) => route.fulfill({ json: { placement: 'daily_brief', components: [] } }));
    await page.goto('/app');
    await page
      .getByLabel('Identity provider token', { exact: true })
      .fill(await idp.token({ sub: `uid-widgets-${Date.now()}`, name: 'Wendy Widget' }));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Your widgets' }).waitFor();
    return page;
  }

  it('renders ranked_list, progress_bar, meeting_prep and cta_banner from their usual data shapes', async () => {
    const page = await homeWith([
      component('top_payees', 'ranked_list', {
        items: [{ label: 'Landlord', value: 1200 }, { name: 'Grocer', amount: 310.5 }, 'Cinema'],
      }),
      component('savings_goal', 'progress_bar', { label: 'Holiday fund', current: 750, target: 1000 }),
      component('next_meeting', 'meeting_prep', {
        title: 'Quarterly review',
        startsAt: '2026-11-24T09:30:00Z',
        attendees: [{ name: 'Ada' }, { email: 'grace@example.com' }],
        agenda: ['Numbers', 'Hiring'],
      }),
      component('upgrade_offer', 'cta_banner', { headline: 'Save more each month', message: 'Round up every purchase.' }),
    ]);

    const ranked = page.getByRole('region', { name: 'Top payees (Widget Works)' });
    await expect(ranked.getByRole('listitem').allInnerTexts()).resolves.toEqual([
      expect.stringMatching(/Landlord\s*1,200/),
      expect.stringMatching(/Grocer\s*310\.5/),
      'Cinema',
    ]);

    const progress = page.getByRole('progressbar', { name: 'Holiday fund' });
    await expect(progress.getAttribute('aria-valuenow')).resolves.toBe('750');
    await expect(progress.getAttribute('aria-valuemax')).resolves.toBe('1000');
    await page.getByText('75% (750 of 1,000)').waitFor();

    const meeting = page.getByRole('region', { name: 'Next meeting (Widget Works)' });
    await meeting.getByText('Quarterly review').waitFor();
    await meeting.getByText('With Ada, grace@example.com').waitFor();
    await expect(meeting.getByRole('listitem').allInnerTexts()).resolves.toEqual(['Numbers', 'Hiring']);

    const banner = page.getByRole('region', { name: 'Upgrade offer (Widget Works)' });
    await banner.getByText('Save more each month').waitFor();
    await banner.getByText('Round up every purchase.').waitFor();
  });

  it('falls back to plain, bounded text for shapes a renderer does not expect, and never renders markup', async () => {
    const page = await homeWith([
      component('empty_ranking', 'ranked_list', { items: [] }),
      component('no_progress', 'progress_bar', { note: 'no numbers here' }),
      component('fraction_progress', 'progress_bar', 0.4),
      component('bare_meeting', 'meeting_prep', { agenda: '<img src=x onerror=alert(1)>' }),
      component('not_yet', 'ranked_list', null),
    ]);
    await page.getByRole('region', { name: 'Empty ranking (Widget Works)' }).getByText('Nothing ranked yet.').waitFor();
    await page.getByRole('region', { name: 'No progress (Widget Works)' }).getByText('No progress to show.').waitFor();
    const fraction = page.getByRole('progressbar', { name: 'Fraction progress (Widget Works)' });
    await expect(fraction.getAttribute('aria-valuetext')).resolves.toBe('40% (0.4 of 1)');
    const meeting = page.getByRole('region', { name: 'Bare meeting (Widget Works)' });
    await meeting.getByText('Upcoming meeting').waitFor();
    await meeting.getByText('<img src=x onerror=alert(1)>').waitFor();
    await expect(page.locator('main img').count()).resolves.toBe(0);
    await page.getByRole('region', { name: 'Not yet (Widget Works)' }).getByText('Waiting for the first data from Widget Works…').waitFor();
  });
});
