import { BrowserContext, Browser, Page } from 'playwright-core';
import request from 'supertest';
import { launchBrowser, newPage, seriousAxeViolations } from '../support/browser';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { raiseToEnterprise } from '../support/users';
import { waitFor as waitUntilValue } from '../support/wait-for';

const waitUntil = (check: () => Promise<boolean>) =>
  waitUntilValue(async () => ((await check()) ? true : undefined), { what: 'the read receipt at the service', timeoutMs: 10_000 });

interface Person {
  sub: string;
  name: string;
  email: string;
}

interface SignedIn {
  person: Person;
  token: string;
  auth: { authorization: string };
  body: { token: string; expires_at: string; user: { id: string; name: string | null; email: string | null } };
}

/** Relative luminance contrast of two `rgb(…)` colours. */
function contrast(a: string, b: string): number {
  const lum = (rgb: string) => {
    const [r, g, bl] = (rgb.match(/[\d.]+/g) ?? ['0', '0', '0']).slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

/**
 * Two (or three) people using /app together, each in their own browser
 * context: group conversations, the inbox, receipts after a reload, the soul
 * edit form, sending through an outage, the phone layout, and axe-core on
 * every page of /app and /console.
 */
describe('consumer app: chat as people use it', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let browser: Browser;
  const contexts: BrowserContext[] = [];

  const ada: Person = { sub: 'uid-chat-ada', name: 'Ada Lovelace', email: 'ada.chat@example.com' };
  const grace: Person = { sub: 'uid-chat-grace', name: 'Grace Hopper', email: 'grace.chat@example.com' };

  async function signInApi(person: Person): Promise<SignedIn> {
    const res = await request(url)
      .post('/v1/auth/login')
      .send({ firebase_token: await idp.token(person) })
      .expect(200);
    return { person, token: res.body.token, auth: { authorization: `Bearer ${res.body.token}` }, body: res.body };
  }

  /** A page of `who`, signed in by storing the session the sign-in screen would store (the sign-in flow has its own tests). */
  async function open(who: SignedIn, path = '/app/', options: { mobile?: boolean; setup?: (page: Page) => Promise<void> } = {}) {
    const page = await newPage(browser, { baseURL: url, mobile: options.mobile });
    contexts.push(page.context());
    await options.setup?.(page);
    const stored = JSON.stringify({ token: who.body.token, expiresAt: who.body.expires_at, user: who.body.user });
    await page.context().addInitScript(`try {
        localStorage.setItem('soul.app.session', ${JSON.stringify(stored)});
        sessionStorage.setItem('soul.app.session', ${JSON.stringify(stored)});
      } catch {}`);
    await page.goto(path);
    await page.locator('.topbar').waitFor();
    return page;
  }

  async function addContact(who: SignedIn, name: string, email?: string): Promise<string> {
    const res = await request(url)
      .post('/v1/contacts')
      .set(who.auth)
      .send({ name, ...(email ? { email } : {}) })
      .expect(201);
    return res.body.id as string;
  }

  async function history(who: SignedIn, withId: string): Promise<Array<Record<string, unknown>>> {
    const res = await request(url).get(`/v1/messages?with=${withId}&limit=100`).set(who.auth).expect(200);
    return res.body.messages;
  }

  const live = (page: Page) => page.getByRole('status', { name: 'Live updates: Live' }).waitFor();

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start({ capabilities: goodPackageCapabilities() });
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
    url = (await env.startApi()).url;
    await env.startWorker();
    browser = await launchBrowser();
  });

  // Every page of a test goes with it: each holds a gateway connection of its user.
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close().catch(() => undefined);
  });

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  let adaUser: SignedIn;
  let graceUser: SignedIn;
  /** Ada's contact for Grace and Grace's for Ada (mutual). */
  let adaToGrace = '';
  let graceToAda = '';

  beforeAll(async () => {
    adaUser = await signInApi(ada);
    graceUser = await signInApi(grace);
    // Ada and Grace take part in every test: the enterprise tier's request and connection limits leave room for all their pages.
    await raiseToEnterprise(url, adaUser.body.user);
    await raiseToEnterprise(url, graceUser.body.user);
    adaToGrace = await addContact(adaUser, 'Grace', grace.email);
    graceToAda = await addContact(graceUser, 'Ada', ada.email);
  });

  it('shows a group conversation live to its owner and its member, labelled, and never inside a one-to-one thread', async () => {
    const owner = await open(adaUser, '/app/groups');
    const member = await open(graceUser, '/app/inbox');
    await owner.getByLabel('Group name', { exact: true }).fill('Analytical Engine');
    await owner.getByLabel('Grace', { exact: true }).check();
    await owner.getByRole('button', { name: 'Create group' }).click();
    await owner.getByRole('link', { name: 'Open Analytical Engine' }).click();
    await owner.getByRole('heading', { level: 1, name: 'Analytical Engine' }).waitFor();
    await live(owner);
    await owner.getByLabel('Message to the group Analytical Engine', { exact: true }).fill('Notes on the engine are ready.');
    await owner.getByRole('button', { name: 'Send' }).click();
    await owner.getByRole('log', { name: 'Messages in Analytical Engine' }).getByText('Notes on the engine are ready.').waitFor();

    // The member's inbox learns of the group from the message itself, without a reload.
    const entry = member.getByRole('link', { name: /Analytical Engine/ });
    await entry.waitFor();
    await entry.getByText('Notes on the engine are ready.').waitFor();
    await entry.click();
    await member.getByRole('heading', { level: 1, name: 'Analytical Engine' }).waitFor();
    const memberLog = member.getByRole('log', { name: 'Messages in Analytical Engine' });
    const first = memberLog.getByRole('listitem').filter({ hasText: 'Notes on the engine are ready.' });
    // Labelled with the sender, by the member's own name for her.
    await first.getByText('Ada', { exact: true }).waitFor();
    // And the next one arrives on the open group page live.
    await live(member);
    await owner.getByLabel('Message to the group Analytical Engine', { exact: true }).fill('Second note: the mill.');
    await owner.getByRole('button', { name: 'Send' }).click();
    await memberLog.getByRole('listitem').filter({ hasText: 'Second note: the mill.' }).getByText('Ada', { exact: true }).waitFor();

    // Neither one-to-one thread shows the group's messages, live or after a reload.
    await member.goto(`/app/contacts/${graceToAda}`);
    await member.getByRole('log', { name: 'Messages with Ada' }).waitFor();
    await owner.goto(`/app/contacts/${adaToGrace}`);
    const ownerThread = owner.getByRole('log', { name: 'Messages with Grace' });
    await ownerThread.waitFor();
    await live(owner);
    await live(member);
    await owner.waitForTimeout(500);
    expect(await ownerThread.getByText('Notes on the engine are ready.').count()).toBe(0);
    expect(await member.getByRole('log', { name: 'Messages with Ada' }).getByText('Notes on the engine are ready.').count()).toBe(0);
  });

  it('shows a member the group read-only, with a way to answer its owner one-to-one', async () => {
    const group = await request(url)
      .post('/v1/groups')
      .set(adaUser.auth)
      .send({ name: 'Difference Engine', member_ids: [adaToGrace] })
      .expect(201);
    const groupId = (group.body as { id: string }).id;
    await request(url)
      .post('/v1/messages')
      .set(adaUser.auth)
      .send({ recipient_id: groupId, content: 'Tables by the method of differences.' })
      .expect(201);
    // The service's rule (docs/decisions.md): only the owner writes to a group; a member's send is refused as any foreign id.
    await request(url).post('/v1/messages').set(graceUser.auth).send({ recipient_id: groupId, content: 'May I?' }).expect(404);

    const member = await open(graceUser, `/app/groups/${groupId}`);
    await member.getByRole('heading', { level: 1, name: 'Difference Engine' }).waitFor();
    await member.getByRole('log', { name: 'Messages in Difference Engine' }).getByText('Tables by the method of differences.').waitFor();
    await member.getByText('Only Ada writes to this group.').waitFor();
    // No composer that could only fail.
    expect(await member.getByLabel('Message to the group Difference Engine', { exact: true }).count()).toBe(0);
    expect(await member.getByRole('button', { name: 'Send' }).count()).toBe(0);
    expect(await seriousAxeViolations(member)).toEqual([]);

    // The way to answer is the one-to-one thread with the owner, reached by keyboard.
    const answer = member.getByRole('link', { name: 'Write to Ada' });
    await answer.focus();
    await member.keyboard.press('Enter');
    await member.getByRole('log', { name: 'Messages with Ada' }).waitFor();
    expect(new URL(member.url()).pathname).toBe(`/app/contacts/${graceToAda}`);
    await member.getByRole('textbox').first().waitFor();

    // The owner's page of the same group keeps its composer.
    const owner = await open(adaUser, `/app/groups/${groupId}`);
    await owner.getByLabel('Message to the group Difference Engine', { exact: true }).waitFor();
  });

  it('keeps the saved traits when a soul edit changes only the values, and sends only what changed', async () => {
    await request(url)
      .patch('/v1/soul')
      .set(adaUser.auth)
      .send({ traits: { communication_style: 'expressive', humour: 'witty', formality: 0.8, empathy: 0.3 }, values: ['curiosity'] })
      .expect(200);
    const page = await open(adaUser, '/app/soul');
    await page.getByRole('button', { name: 'Edit traits and values' }).click();
    expect(await page.getByLabel('Communication style', { exact: true }).inputValue()).toBe('expressive');
    expect(await page.getByLabel('Humour', { exact: true }).inputValue()).toBe('witty');
    expect(await page.getByLabel(/^Formality/).inputValue()).toBe('80');
    expect(await page.getByLabel(/^Empathy/).inputValue()).toBe('30');
    expect(await page.getByLabel('Values', { exact: true }).inputValue()).toBe('curiosity');
    await page.getByLabel('Values', { exact: true }).fill('curiosity\nimagination');
    const [patch] = await Promise.all([
      page.waitForRequest((r) => r.url().endsWith('/v1/soul') && r.method() === 'PATCH'),
      page.getByRole('button', { name: 'Save' }).click(),
    ]);
    expect(patch.postDataJSON()).toEqual({ values: ['curiosity', 'imagination'] });
    await page.getByRole('listitem').getByText('imagination').waitFor();
    const soul = await request(url).get('/v1/soul').set(adaUser.auth).expect(200);
    expect(soul.body.traits).toMatchObject({ communication_style: 'expressive', humour: 'witty', formality: 0.8, empathy: 0.3 });
    expect(soul.body.values).toEqual(['curiosity', 'imagination']);
  });

  it('shows read and waiting receipts again after a reload', async () => {
    const carol = await addContact(adaUser, 'Carol', 'carol.not.yet@example.com');
    const sender = await open(adaUser, `/app/contacts/${adaToGrace}`);
    await live(sender);
    await sender.getByLabel('Message to Grace', { exact: true }).fill('Did you get the punched cards?');
    await sender.getByRole('button', { name: 'Send' }).click();
    const reader = await open(graceUser, `/app/contacts/${graceToAda}`);
    await reader.getByRole('log', { name: 'Messages with Ada' }).getByText('Did you get the punched cards?').waitFor();
    const mine = sender.getByRole('log').getByRole('listitem').filter({ hasText: 'Did you get the punched cards?' });
    await mine.getByText('Read', { exact: true }).waitFor();
    await sender.reload();
    await mine.getByText('Read', { exact: true }).waitFor();

    await sender.goto(`/app/contacts/${carol}`);
    await sender.getByLabel('Message to Carol', { exact: true }).fill('Welcome aboard, Carol.');
    await sender.getByRole('button', { name: 'Send' }).click();
    const waiting = sender.getByRole('log').getByRole('listitem').filter({ hasText: 'Welcome aboard, Carol.' });
    await waiting.getByText('Waiting for Carol to join').waitFor();
    await sender.reload();
    await waiting.getByText('Waiting for Carol to join').waitFor();
  });

  it('counts unread messages per conversation and in the title, live, and notifies once allowed', async () => {
    const hedy: Person = { sub: 'uid-chat-hedy', name: 'Hedy Lamarr', email: 'hedy.chat@example.com' };
    const hedyUser = await signInApi(hedy);
    const hedyToAda = await addContact(hedyUser, 'Ada', ada.email);
    const adaToHedy = await addContact(adaUser, 'Hedy', hedy.email);
    const page = await open(adaUser, '/app/inbox', {
      setup: async (p) => {
        await p.context().grantPermissions(['notifications']);
        // Records the notifications the page raises (headless Chromium shows none).
        await p.addInitScript(`window.shown = [];
          window.Notification = class {
            static permission = 'granted';
            static requestPermission() { return Promise.resolve('granted'); }
            constructor(title, options) { window.shown.push({ title, body: options && options.body }); }
            close() {}
          };`);
      },
    });
    await page.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
    await live(page);
    await page.getByRole('button', { name: 'Turn on notifications' }).click();
    await page.getByRole('button', { name: 'Turn notifications off' }).waitFor();
    for (const content of ['Frequency hopping, first note.', 'And a second one.']) {
      await request(url).post('/v1/messages').set(hedyUser.auth).send({ recipient_id: hedyToAda, content }).expect(201);
    }
    const entry = page.getByRole('link', { name: /Hedy/ });
    await entry.getByText('And a second one.').waitFor();
    await entry
      .locator('.badge-unread')
      .filter({ hasText: /^2 unread$/ })
      .waitFor();
    await page.waitForFunction("document.title.startsWith('(2) ')");
    // Hedy's conversation is first: ordered by last message.
    expect(await page.locator('.conversation-name').first().textContent()).toContain('Hedy');
    expect(await page.evaluate<Array<{ title: string; body: string }>>('window.shown')).toEqual(
      expect.arrayContaining([{ title: 'Hedy', body: 'And a second one.' }]),
    );

    // Opening the conversation reads it: the count and the title prefix go, and stay gone after a reload.
    await entry.click();
    await page.getByRole('log', { name: 'Messages with Hedy' }).getByText('And a second one.').waitFor();
    await page.waitForFunction("!document.title.startsWith('(')");
    // The title clears at once on screen; the read receipt reaches the service over the socket just after. Reload
    // once the service has it, as a person who reopens the app a moment later would.
    await waitUntil(async () => {
      const res = await request(url).get('/v1/conversations').set(adaUser.auth).expect(200);
      const hedyConversation = (res.body.conversations as Array<{ id: string; unread: number }>).find((c) => c.id === adaToHedy);
      return hedyConversation?.unread === 0;
    });
    await page.goto('/app/inbox');
    await page.getByRole('link', { name: /Hedy/ }).getByText('And a second one.').waitFor();
    await page.waitForTimeout(300);
    expect(await page.title()).not.toMatch(/^\(/);
    // A message to the open conversation is neither counted nor notified.
    const before = (await page.evaluate<unknown[]>('window.shown')).length;
    await page.goto(`/app/contacts/${adaToHedy}`);
    await live(page);
    await request(url).post('/v1/messages').set(hedyUser.auth).send({ recipient_id: hedyToAda, content: 'Seen at once.' }).expect(201);
    await page.getByRole('log').getByText('Seen at once.').waitFor();
    expect(await page.title()).not.toMatch(/^\(/);
    expect((await page.evaluate<unknown[]>('window.shown')).length).toBe(before);
  });

  it('sends a message written during an outage once the service is back, once, without retyping it', async () => {
    let down = false;
    let lostAnswers = 0;
    const page = await open(adaUser, `/app/contacts/${adaToGrace}`, {
      setup: async (p) => {
        await p.addInitScript(`window.sockets = [];
          window.WebSocket = class extends WebSocket {
            constructor(...args) { super(...args); window.sockets.push(this); }
          };`);
        await p.routeWebSocket(/\/v1\/gateway/, (ws) => {
          if (down) void ws.close({ code: 4000, reason: 'outage' });
          else ws.connectToServer();
        });
        await p.route('**/v1/**', async (route) => {
          if (!down) return route.continue();
          // The first send reaches the service but its answer is lost; everything after fails to connect.
          if (route.request().method() === 'POST' && route.request().url().endsWith('/v1/messages') && lostAnswers === 0) {
            lostAnswers += 1;
            await route.fetch();
            return route.abort('connectionreset');
          }
          return route.abort('internetdisconnected');
        });
      },
    });
    const reader = await open(graceUser, `/app/contacts/${graceToAda}`);
    await live(page);
    await page.locator('.page-title').getByText('Online').waitFor();

    down = true;
    await page.evaluate('window.sockets.forEach((socket) => socket.close())');
    await page.getByRole('status', { name: /Live updates: (Offline|Connecting)/ }).waitFor();
    // Nobody's presence is known while the service cannot be reached.
    await page.locator('.page-title').getByText('Status unknown').waitFor();
    await page.getByLabel('Message to Grace', { exact: true }).fill('Written while the line was down.');
    await page.getByRole('button', { name: 'Send' }).click();
    const pending = page.getByRole('log').getByRole('listitem').filter({ hasText: 'Written while the line was down.' });
    await pending.getByText(/Waiting for the connection/).waitFor();
    expect(await page.getByLabel('Message to Grace', { exact: true }).inputValue()).toBe('');
    expect(lostAnswers).toBe(1);

    down = false;
    // The outbox tries again on its own (at most 8 s apart) and the gateway reconnects with backoff.
    await page.getByRole('status', { name: 'Live updates: Live' }).waitFor({ timeout: 40_000 });
    await pending.getByText(/^(Sent|Delivered|Read)$/).waitFor({ timeout: 30_000 });
    await reader.getByRole('log', { name: 'Messages with Ada' }).getByText('Written while the line was down.').waitFor();
    // The error and the reconnecting line clear by themselves; the stale "Connecting…" line is gone under "Live".
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.getByText('Connecting to live updates…').count()).toBe(0);
    await page.locator('.page-title').getByText('Online').waitFor();
    await reader.waitForTimeout(1_500);
    expect(await reader.getByRole('log').getByText('Written while the line was down.').count()).toBe(1);
    expect(await page.getByRole('log').getByText('Written while the line was down.').count()).toBe(1);
    const sent = (await history(adaUser, adaToGrace)).filter((m) => m.content === 'Written while the line was down.');
    expect(sent).toHaveLength(1);
  }, 90_000);

  it('fits a phone: Send is on the first screen of a chat, links in messages are safe, and the focus ring contrasts', async () => {
    await request(url)
      .post('/v1/messages')
      .set(graceUser.auth)
      .send({
        recipient_id: graceToAda,
        content: 'Specs at https://example.com/specs?v=2. Not this: javascript:alert(1) <b>bold</b> <img src=x onerror=alert(1)>',
      })
      .expect(201);
    const page = await open(adaUser, `/app/contacts/${adaToGrace}`, { mobile: true });
    const log = page.getByRole('log', { name: 'Messages with Grace' });
    const link = log.getByRole('link', { name: 'https://example.com/specs?v=2' }).last();
    await link.waitFor();
    expect(await link.getAttribute('href')).toBe('https://example.com/specs?v=2');
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer nofollow');
    expect(await log.locator('b, img, script').count()).toBe(0);
    expect(await log.locator('a[href^="javascript"]').count()).toBe(0);

    const send = page.getByRole('button', { name: 'Send' });
    const box = await send.boundingBox();
    expect(box).not.toBeNull();
    expect(box!.y + box!.height).toBeLessThanOrEqual(844);
    expect(await page.evaluate<number>('window.scrollY')).toBe(0);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);

    await page.getByLabel('Message to Grace', { exact: true }).focus();
    await page.keyboard.press('Tab');
    const ring = await page.evaluate<{ color: string; style: string; width: string }>(
      `(() => { const s = getComputedStyle(document.activeElement); return { color: s.outlineColor, style: s.outlineStyle, width: s.outlineWidth }; })()`,
    );
    expect(ring.style).not.toBe('none');
    expect(parseFloat(ring.width)).toBeGreaterThanOrEqual(2);
    expect(contrast(ring.color, 'rgb(255, 255, 255)')).toBeGreaterThanOrEqual(3);
  });

  it('hides Previous/Next with one page of contacts and shows a new contact’s presence without a reload', async () => {
    const mary: Person = { sub: 'uid-chat-mary', name: 'Mary Somerville', email: 'mary.chat@example.com' };
    const joan: Person = { sub: 'uid-chat-joan', name: 'Joan Clarke', email: 'joan.chat@example.com' };
    const maryUser = await signInApi(mary);
    const joanUser = await signInApi(joan);
    await addContact(maryUser, 'Joan', joan.email);
    const page = await open(maryUser, '/app/contacts');
    await page.getByText('1 contact, closest first.').waitFor();
    expect(await page.getByRole('button', { name: 'Previous' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Next' }).count()).toBe(0);
    await live(page);
    const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Joan', exact: true }) });
    expect(await card.getByText('Online').count()).toBe(0);
    // Joan signs in and adds Mary back: Mary's page shows her presence without a reload.
    await open(joanUser, '/app/');
    await addContact(joanUser, 'Mary', mary.email);
    await card.getByText('Online').waitFor({ timeout: 30_000 });
  }, 60_000);

  it('has no serious or critical axe-core violations on any page of /app or /console', async () => {
    // Something on every page: a package, a group, a conversation, a developer with an app, a package and a delivery.
    const developer = await onboardDeveloper(url, smtp, 'axe-dev@example.com');
    const app = await registerApp(url, developer);
    const appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    const pkg = await publishPackage(url, appAuth, {
      appId: app.id,
      name: 'Acme Notes',
      slug: 'acme-notes',
      description: 'Notes and reminders',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      capabilities: goodPackageCapabilities(),
    });
    const group = await request(url)
      .post('/v1/groups')
      .set(adaUser.auth)
      .send({ name: 'Axe group', member_ids: [adaToGrace] })
      .expect(201);
    await request(url).post('/v1/messages').set(adaUser.auth).send({ recipient_id: group.body.id, content: 'Checking the group page.' });

    const findings: Record<string, unknown> = {};
    const check = async (page: Page, path: string, ready: () => Promise<unknown>) => {
      await page.goto(path);
      await ready();
      const found = await seriousAxeViolations(page);
      if (found.length > 0) findings[path] = found;
    };
    const h1 = (page: Page) => () => page.getByRole('heading', { level: 1 }).first().waitFor();

    // /app signed out: the first screen.
    const visitor = await newPage(browser, { baseURL: url });
    contexts.push(visitor.context());
    await check(visitor, '/app/', () => visitor.locator('main').first().waitFor());

    const page = await open(adaUser, '/app/');
    for (const path of [
      '/app/',
      '/app/inbox',
      '/app/contacts',
      `/app/contacts/${adaToGrace}`,
      '/app/groups',
      `/app/groups/${group.body.id as string}`,
      '/app/marketplace',
      `/app/marketplace/${pkg.slug}`,
      '/app/soul',
      '/app/agent',
      '/app/no-such-page',
    ]) {
      await check(page, path, async () => {
        await page.locator('main').first().waitFor();
        await page.getByRole('status', { name: /Live updates/ }).waitFor();
        await page.waitForLoadState('networkidle').catch(() => undefined);
      });
    }
    // The dialogs of the app (a confirmation, open).
    await page.goto('/app/soul');
    await page.getByRole('button', { name: 'Delete soul record…' }).click();
    await page.getByRole('dialog').waitFor();
    const dialogFindings = await seriousAxeViolations(page);
    if (dialogFindings.length > 0) findings['/app/soul (dialog)'] = dialogFindings;

    // /console signed out.
    const dev = await newPage(browser, { baseURL: url });
    contexts.push(dev.context());
    for (const path of ['/console/login', '/console/signup', '/console/check-email', '/console/verify-email?token=not-a-token']) {
      await check(dev, path, h1(dev));
    }
    // /console signed in.
    await dev.evaluate(
      `localStorage.setItem('soul.console.session', ${JSON.stringify(JSON.stringify({ token: developer.token, expiresAt: new Date(Date.now() + 3_600_000).toISOString(), email: developer.email }))});
       sessionStorage.setItem('soul.console.session', ${JSON.stringify(JSON.stringify({ token: developer.token, expiresAt: new Date(Date.now() + 3_600_000).toISOString(), email: developer.email }))});`,
    );
    for (const path of [
      '/console/',
      '/console/account',
      '/console/apps',
      '/console/apps/new',
      `/console/apps/${app.id}`,
      `/console/apps/${app.id}/webhook`,
      '/console/packages',
      '/console/packages/new',
      `/console/packages/${pkg.packageId}`,
      `/console/packages/${pkg.packageId}/versions/new`,
      `/console/packages/${pkg.packageId}/versions/${pkg.versionId}`,
    ]) {
      await check(dev, path, async () => {
        await h1(dev)();
        await dev.waitForLoadState('networkidle').catch(() => undefined);
      });
    }
    expect(findings).toEqual({});
  }, 180_000);
});
