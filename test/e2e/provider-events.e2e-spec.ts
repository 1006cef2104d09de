import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, OnboardedDeveloper, publishPackage, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { login } from '../support/users';
import { waitFor } from '../support/wait-for';
import { WebhookReceiver } from '../support/webhook-receiver';

const problemType = (code: string) => `https://docs.example.com/developers/errors#${code}`;

interface EventBody {
  id: string;
  type: string;
  created_at: string;
  app_id: string;
  idempotency_key: string;
  data: Record<string, unknown>;
}

/**
 * The events API (GET /v1/providers/events): every webhook-able event of an
 * app, as the envelope its endpoint receives, for reconciliation by event id;
 * against a real HTTPS webhook receiver and provider runtime on loopback.
 */
describe('provider events API: reconciliation by event id', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let receiver: WebhookReceiver;
  let url: string;
  let dataSource: DataSource;
  let developer: OnboardedDeveloper;
  let appId: string;
  let appAuth: { authorization: string };
  let quietAppId: string;
  let quietAuth: { authorization: string };
  let packageId: string;
  let installId: string;

  const events = (query: Record<string, string | number | string[]> = {}, auth = appAuth) =>
    request(url).get('/v1/providers/events').query(query).set(auth);
  /** Every event the query lists, following the cursor page by page. */
  async function allPages(query: Record<string, string | number>, auth = appAuth): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: request.Response = await events(cursor ? { ...query, cursor } : query, auth).expect(200);
      ids.push(...(res.body.events as EventBody[]).map((e) => e.id));
      cursor = res.body.next_cursor as string | null;
      pages += 1;
    } while (cursor);
    return { ids, pages };
  }
  const keptEvent = (type: string, appOf = appId) =>
    waitFor(
      async () =>
        (await dataSource.query(`SELECT id FROM app_events WHERE app_id = $1 AND type = $2 ORDER BY created_at DESC`, [appOf, type]))[0] as
          { id: string } | undefined,
      { what: `a kept ${type} of ${appOf}` },
    );

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    receiver = await WebhookReceiver.start();
    env = await TestEnvironment.create({
      SMTP_URL: smtp.url,
      ...idp.env,
      WEBHOOK_RETRY_BASE_MS: '1',
      EVENT_SWEEP_INTERVAL_MS: '200',
    });
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    await env.startWorker();
    developer = await onboardDeveloper(url, smtp, 'events@example.com');
    // Registered with a webhook_url: its endpoint subscribes to every type.
    const app = await registerApp(url, developer, { webhook_url: receiver.url });
    appId = app.id;
    appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    // A second app of the same developer, with no webhook endpoint at all: its events are kept all the same.
    const quiet = await registerApp(url, developer, { name: 'Acme Quiet', webhook_url: undefined });
    quietAppId = quiet.id;
    quietAuth = { authorization: `Bearer ${await appToken(url, quiet)}` };

    ({ packageId } = await publishPackage(url, appAuth, {
      appId,
      name: 'Acme Bank Events',
      slug: 'acme-bank-events',
      description: 'Balances and transfers',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      capabilities: goodPackageCapabilities(),
    }));
    await publishPackage(url, quietAuth, {
      appId: quietAppId,
      name: 'Acme Quiet Package',
      slug: 'acme-quiet',
      description: 'Balances and transfers, quietly',
      riskTier: 'action_capable',
      runtimeUrl: runtime.url,
      capabilities: goodPackageCapabilities(),
    });
    const user = await login(url, idp, { sub: 'uid-events', name: 'Events User', email: 'events-user@example.com' });
    const install = await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201);
    installId = install.body.id;
    await request(url)
      .post(`/v1/providers/packages/${packageId}/capabilities/balance/execute`)
      .set(user.auth)
      .send({ params: { account: 'checking' } })
      .expect(200);
    await keptEvent('capability.invoked');
    await keptEvent('package.published', quietAppId);
  }, 90_000);

  afterAll(async () => {
    await env?.close();
    await receiver?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  it('lists install, capability and package events with the id and the exact envelope a real receiver got', async () => {
    const delivered = await waitFor(
      () =>
        receiver.received.find(
          (r) => r.body.type === 'install.created' && (r.body.data as { install_id?: string }).install_id === installId,
        ),
      { what: 'the install.created delivery' },
    );
    const res = await events({ limit: 100 }).expect(200);
    const listed = res.body.events as EventBody[];
    expect(new Set(listed.map((e) => e.type))).toEqual(
      new Set(['package.submitted', 'package.published', 'install.created', 'capability.invoked']),
    );
    expect(listed.every((e) => e.app_id === appId)).toBe(true);
    const same = listed.find((e) => e.id === delivered.body.id);
    expect(same).toEqual(delivered.body);
    // The single event route answers the same envelope, byte for byte as JSON.
    const one = await request(url)
      .get(`/v1/providers/events/${delivered.body.id as string}`)
      .set(appAuth)
      .expect(200);
    expect(JSON.stringify(one.body)).toBe(delivered.raw.toString('utf8'));
    // Newest first.
    const times = listed.map((e) => Date.parse(e.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it('keeps the events of an app that has no webhook endpoint', async () => {
    const res = await events({}, quietAuth).expect(200);
    expect((res.body.events as EventBody[]).map((e) => e.type).sort()).toEqual(['package.published', 'package.submitted']);
    expect((res.body.events as EventBody[]).every((e) => e.app_id === quietAppId)).toBe(true);
  });

  it('filters by one or several types, by repeated parameters or commas, and by time', async () => {
    const single = await events({ type: 'install.created' }).expect(200);
    expect((single.body.events as EventBody[]).map((e) => e.type)).toEqual(['install.created']);
    const comma = await events({ type: 'install.created,package.published' }).expect(200);
    expect((comma.body.events as EventBody[]).map((e) => e.type).sort()).toEqual(['install.created', 'package.published']);
    const repeated = await events({ type: ['install.created', 'package.published'] }).expect(200);
    expect(repeated.body.events).toEqual(comma.body.events);

    const all = (await events({ limit: 100 }).expect(200)).body.events as EventBody[];
    const pivot = all.find((e) => e.type === 'install.created')!;
    const since = (await events({ since: pivot.created_at, limit: 100 }).expect(200)).body.events as EventBody[];
    const until = (await events({ until: pivot.created_at, limit: 100 }).expect(200)).body.events as EventBody[];
    expect(since.map((e) => e.id)).toContain(pivot.id);
    expect(until.map((e) => e.id)).not.toContain(pivot.id);
    expect(since.every((e) => e.created_at >= pivot.created_at)).toBe(true);
    expect(until.every((e) => e.created_at < pivot.created_at)).toBe(true);
    expect(new Set([...since, ...until].map((e) => e.id))).toEqual(new Set(all.map((e) => e.id)));
  });

  it('pages with the cursor across events that share a millisecond, with no gap and no duplicate', async () => {
    // Ten events of the app in one instant (as a busy dispatch batch may write them), beside the real ones.
    const at = new Date().toISOString();
    for (let i = 0; i < 10; i += 1) {
      const id = `evt_${String(i).padStart(22, 'S')}`;
      const body = JSON.stringify({
        id,
        type: 'install.removed',
        created_at: at,
        app_id: appId,
        idempotency_key: `${id}.${appId}`,
        data: {},
      });
      await dataSource.query(`INSERT INTO app_events (id, app_id, type, body, created_at) VALUES ($1, $2, 'install.removed', $3, $4)`, [
        id,
        appId,
        body,
        at,
      ]);
    }
    const whole = (await events({ limit: 100 }).expect(200)).body.events as EventBody[];
    expect(whole.length).toBeGreaterThanOrEqual(14);
    const paged = await allPages({ limit: 3 });
    expect(paged.pages).toBe(Math.ceil(whole.length / 3));
    expect(paged.ids).toEqual(whole.map((e) => e.id));
    expect(new Set(paged.ids).size).toBe(paged.ids.length);
    await dataSource.query(`DELETE FROM app_events WHERE id LIKE 'evt_SSSS%'`);
  });

  it("shows a console token every app of its developer, narrowed with app_id, and never another app's events to an app token", async () => {
    const both = await allPages({ limit: 100 }, developer.auth);
    const mine = await allPages({ limit: 100 });
    const quiet = await allPages({ limit: 100 }, quietAuth);
    expect(new Set(both.ids)).toEqual(new Set([...mine.ids, ...quiet.ids]));
    // Paged two at a time across both apps: the same events in the same order, newest first.
    expect((await allPages({ limit: 2 }, developer.auth)).ids).toEqual(both.ids);
    const narrowed = await events({ app_id: quietAppId }, developer.auth).expect(200);
    expect((narrowed.body.events as EventBody[]).map((e) => e.id).sort()).toEqual([...quiet.ids].sort());

    // The quiet app's token: the other app's event is not found, and naming the other app is refused.
    const foreign = mine.ids[0];
    await request(url).get(`/v1/providers/events/${foreign}`).set(quietAuth).expect(404);
    const refused = await events({ app_id: appId }, quietAuth).expect(403);
    expect(refused.body.type).toBe(problemType('insufficient_scope'));
  });

  it("answers 404 for another developer's event and 403 for their app, and lists none of theirs", async () => {
    const other = await onboardDeveloper(url, smtp, 'other-events@example.com');
    const eventId = ((await events({ limit: 1 }).expect(200)).body.events as EventBody[])[0].id;
    const res = await request(url).get(`/v1/providers/events/${eventId}`).set(other.auth).expect(404);
    expect(res.body.type).toBe(problemType('not_found'));
    expect((await events({}, other.auth).expect(200)).body).toEqual({ events: [], next_cursor: null });
    await events({ app_id: appId }, other.auth).expect(403);
    await request(url).get('/v1/providers/events/evt_0000000000000000000000').set(appAuth).expect(404);
    await request(url).get('/v1/providers/events/not-an-id').set(appAuth).expect(404);
  });

  it('needs webhooks:read on an app token, and a token', async () => {
    const app = await registerApp(url, developer, { name: 'Acme Narrow', webhook_url: undefined });
    const narrow = { authorization: `Bearer ${await appToken(url, app, 'packages:read')}` };
    const res = await events({}, narrow).expect(403);
    expect(res.body.type).toBe(problemType('insufficient_scope'));
    await request(url).get(`/v1/providers/events/evt_0000000000000000000000`).set(narrow).expect(403);
    await request(url).get('/v1/providers/events').expect(401);
  });

  it('refuses hostile filters with invalid_format or a validation problem, never a 500', async () => {
    const hostile: Array<Record<string, string | number>> = [
      { type: 'soul.deleted' },
      { type: 'install.created,' },
      { since: 'yesterday' },
      { until: '2026-13-01T00:00:00Z' },
      { cursor: 'bm90LWEtY3Vyc29y' },
      { cursor: Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', 'x'])).toString('base64url') },
      { limit: 0 },
      { limit: 101 },
      { app_id: "app_'; DROP TABLE app_events; --" },
    ];
    for (const query of hostile) {
      const res = await events(query);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
  });

  it('writes an event once when the outbox dispatches it again', async () => {
    const { id } = await keptEvent('install.created');
    const before: Array<{ body: string }> = await dataSource.query(`SELECT body FROM app_events WHERE id = $1`, [id]);
    const dispatches = async () =>
      (await dataSource.query(`SELECT attempts, dispatched_at FROM events WHERE id = $1`, [id]))[0] as {
        attempts: number;
        dispatched_at: Date | null;
      };
    const first = await dispatches();
    expect(first.dispatched_at).not.toBeNull();
    await dataSource.query(`UPDATE events SET dispatched_at = NULL, available_at = now() WHERE id = $1`, [id]);
    // Dispatched again: a failing subscriber (a duplicate key) would leave it undispatched and count no attempt.
    await waitFor(
      async () => {
        const now = await dispatches();
        return now.dispatched_at !== null && now.attempts === first.attempts + 1;
      },
      { what: 'the event to be dispatched again' },
    );
    const after: Array<{ body: string }> = await dataSource.query(`SELECT body FROM app_events WHERE id = $1`, [id]);
    expect(after).toEqual(before);
  });

  it('purges events older than 30 days with the retention job and keeps younger ones', async () => {
    const { ids } = await allPages({ limit: 100 });
    const [old, young] = ids;
    await dataSource.query(`UPDATE app_events SET created_at = now() - interval '31 days' WHERE id = $1`, [old]);
    await dataSource.query(`UPDATE app_events SET created_at = now() - interval '29 days' WHERE id = $1`, [young]);
    await request(url).post('/v1/operator/system/purge').set('authorization', `Bearer ${OPERATOR_TOKEN}`).expect(202);
    await waitFor(async () => (await request(url).get(`/v1/providers/events/${old}`).set(appAuth)).status === 404, {
      what: 'the old event to be purged',
    });
    await request(url).get(`/v1/providers/events/${young}`).set(appAuth).expect(200);
  });
});
