import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { assertTestCaTrusted } from '../support/test-ca';
import { factories } from '../support/factories';
import { SpawnedRole, TestEnvironment } from '../support/harness';
import { appToken, onboardDeveloper, registerApp } from '../support/providers';
import { subscribeWebhook } from '../support/webhook-profiles';
import { SmtpSink } from '../support/smtp-sink';
import { waitFor } from '../support/wait-for';
import { WebhookReceiver } from '../support/webhook-receiver';

const EVENTS = 500;

/**
 * At-least-once under a crash: the worker process is killed with SIGKILL in
 * the middle of a batch and started again. Needs `npm run build` (dist/worker.js).
 */
jest.setTimeout(180_000);

describe('webhook delivery survives a killed worker', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let receiver: WebhookReceiver;
  let url: string;
  let dataSource: DataSource;
  let appId: string;
  let first: SpawnedRole;

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    receiver = await WebhookReceiver.start();
    receiver.fallback = { status: 200, body: 'ok', delayMs: 20 };
    env = await TestEnvironment.create({
      SMTP_URL: smtp.url,
      WEBHOOK_RETRY_BASE_MS: '50',
      WEBHOOK_SWEEP_INTERVAL_MS: '1000',
      WEBHOOK_ENDPOINT_CONCURRENCY: '8',
    });
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    first = env.spawnRole('worker');
    await first.waitForOutput(/processing queues: .*webhook-delivery/);
    const developer = await onboardDeveloper(url, smtp, 'fault-hooks@example.com');
    const app = await registerApp(url, developer, { webhook_url: receiver.url });
    appId = app.id;
    const auth = { authorization: `Bearer ${await appToken(url, app)}` };
    await subscribeWebhook(url, app, auth, { event_types: ['install.created'] });
  });
  afterAll(async () => {
    await env?.close();
    await receiver?.close();
    await smtp?.close();
  });

  it('delivers every one of 500 events at least once and accounts for each in the log', async () => {
    // 500 committed domain events, as other areas record them (one transaction, one wake-up).
    const ids = (await factories(dataSource).installCreatedEvents(appId, EVENTS)).map((id) => ({ id }));
    await factories(dataSource).wakeEventDispatchers();

    const seen = () => new Set(receiver.received.map((r) => r.body.id as string));
    await waitFor(() => seen().size >= 100, { what: '100 deliveries before the crash', timeoutMs: 60_000 });
    await first.kill();
    const atCrash = seen().size;
    expect(atCrash).toBeLessThan(EVENTS);

    const second = env.spawnRole('worker');
    await second.waitForOutput(/processing queues: .*webhook-delivery/);
    await waitFor(() => seen().size === EVENTS, { what: 'every event at the receiver', timeoutMs: 150_000, intervalMs: 250 });

    for (const { id } of ids) expect(seen().has(id)).toBe(true);
    const log: Array<{ event_id: string; status: string; n: string }> = await waitFor(
      async () => {
        const rows: Array<{ event_id: string; status: string; n: string }> = await dataSource.query(
          `SELECT event_id, status, count(*) OVER (PARTITION BY event_id) AS n FROM webhook_deliveries WHERE app_id = $1`,
          [appId],
        );
        return rows.length === EVENTS && rows.every((r) => r.status === 'delivered') ? rows : undefined;
      },
      { what: 'every delivery marked delivered', timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(new Set(log.map((r) => r.event_id))).toEqual(new Set(ids.map((r) => r.id)));
    expect(log.every((r) => r.n === '1')).toBe(true);
    // Duplicates are allowed (at-least-once) but carry the same idempotency key.
    for (const r of receiver.received) expect(r.body.idempotency_key).toBe(`${r.body.id as string}.${appId}`);
  });
});
