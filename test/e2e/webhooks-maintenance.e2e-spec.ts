import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { factories } from '../support/factories';
import { TestEnvironment } from '../support/harness';
import { appToken, onboardDeveloper, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { waitFor } from '../support/wait-for';
import { WebhookReceiver } from '../support/webhook-receiver';
import { subscribeWebhook } from '../support/webhook-profiles';

/**
 * The slow clocks of webhook upkeep: the 90-day rotation reminder and the
 * 5-day disabling of an endpoint that fails every delivery. Time is moved by
 * ageing the stored timestamps, so the real sweep and delivery code decide.
 */
describe('webhooks upkeep: rotation reminders and disabling a failing endpoint', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let receiver: WebhookReceiver;
  let url: string;
  let dataSource: DataSource;

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    receiver = await WebhookReceiver.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, WEBHOOK_RETRY_BASE_MS: '1', WEBHOOK_SWEEP_INTERVAL_MS: '300' });
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    await env.startWorker();
  });
  afterAll(async () => {
    await env?.close();
    await receiver?.close();
    await smtp?.close();
  });

  async function appWithProfile(email: string) {
    const developer = await onboardDeveloper(url, smtp, email);
    const app = await registerApp(url, developer, { webhook_url: receiver.url });
    const auth = { authorization: `Bearer ${await appToken(url, app)}` };
    await subscribeWebhook(url, app, auth, { event_types: ['*'] });
    return { appId: app.id, auth, hook: (path = '') => `/v1/providers/apps/${app.id}/webhook${path}` };
  }
  const mailsTo = (email: string, subject: RegExp) => smtp.messages.filter((m) => m.to.includes(email) && subject.test(m.subject));

  it('mails one reminder when the signing secret is older than 90 days, and none again until the next rotation', async () => {
    const email = 'rotate@example.com';
    const { appId, auth, hook } = await appWithProfile(email);
    const fresh = await request(url).get(hook()).set(auth).expect(200);
    expect(fresh.body.secret_rotation_due).toBe(false);

    await factories(dataSource).webhookSecretRotated(appId, '91 days');
    const reminder = await waitFor(() => mailsTo(email, /rotate your webhook signing secret/i)[0], { what: 'the rotation reminder' });
    expect(reminder.text).toContain(appId);
    expect(reminder.text).toContain('90 days');
    const due = await request(url).get(hook()).set(auth).expect(200);
    expect(due.body.secret_rotation_due).toBe(true);

    // A later sweep (witnessed by another app's reminder) does not repeat the first one.
    const witness = await appWithProfile('rotate-witness@example.com');
    await factories(dataSource).webhookSecretRotated(witness.appId, '91 days');
    await waitFor(() => mailsTo('rotate-witness@example.com', /rotate your webhook signing secret/i)[0], {
      what: "the witness app's reminder",
    });
    expect(mailsTo(email, /rotate your webhook signing secret/i)).toHaveLength(1);

    // Rotating starts the 90 days again.
    await request(url).post(hook('/secret')).set(auth).send({}).expect(200);
    const rotated = await request(url).get(hook()).set(auth).expect(200);
    expect(rotated.body.secret_rotation_due).toBe(false);
  });

  it('disables an endpoint whose every delivery failed for 5 days, mails the developer and holds later events', async () => {
    const email = 'failing@example.com';
    const { appId, auth, hook } = await appWithProfile(email);
    receiver.fallback = { status: 500, body: 'down' };
    try {
      const first = await request(url).post(hook('/test')).set(auth).send({ type: 'install.created' }).expect(202);
      await waitFor(
        async () => {
          const rows: Array<{ failing_since: Date | null }> = await dataSource.query(
            `SELECT failing_since FROM webhook_endpoints WHERE app_id = $1 AND is_primary`,
            [appId],
          );
          return rows[0].failing_since ?? undefined;
        },
        { what: 'the failure streak to start' },
      );
      // Failing for four days is not enough.
      await factories(dataSource).webhookFailingSince(appId, '4 days');
      const second = await request(url).post(hook('/test')).set(auth).send({ type: 'install.created' }).expect(202);
      await waitFor(() => receiver.of(second.body.event_id)[0], { what: 'a failed attempt of the second event' });
      expect((await request(url).get(hook()).set(auth).expect(200)).body.enabled).toBe(true);

      // Past five days, the next failure disables the endpoint.
      await factories(dataSource).webhookFailingSince(appId, '5 days 1 minute');
      await request(url).post(hook('/test')).set(auth).send({ type: 'install.created' }).expect(202);
      const disabled = await waitFor(
        async () => {
          const res = await request(url).get(hook()).set(auth).expect(200);
          return res.body.enabled === false ? res.body : undefined;
        },
        { what: 'the endpoint to be disabled' },
      );
      expect(disabled.disabled_reason).toMatch(/every delivery failed/);
      const mail = await waitFor(() => mailsTo(email, /webhook endpoint disabled/i)[0], { what: 'the disabled-endpoint mail' });
      expect(mail.text).toContain(`/v1/providers/apps/${appId}/webhook/recover`);

      // Later events are held, not sent to the failing endpoint.
      const before = receiver.received.length;
      const held = await request(url).post(hook('/test')).set(auth).send({ type: 'install.created' }).expect(202);
      const settledHeld = await waitFor(
        async () => {
          const res = await request(url)
            .get(hook(`/deliveries/${held.body.id}`))
            .set(auth)
            .expect(200);
          return res.body.status === 'pending' ? undefined : res.body;
        },
        { what: 'the held delivery to settle' },
      );
      expect(settledHeld).toMatchObject({ status: 'failed', last_error: 'endpoint_disabled' });
      expect(receiver.received.length).toBe(before);
      expect(first.body.id).toMatch(/^dlv_/);
    } finally {
      receiver.reset();
    }
  });

  it('forgives a failure streak when a delivery succeeds', async () => {
    const { appId, auth, hook } = await appWithProfile('recovering@example.com');
    receiver.respondWith({ status: 503 });
    await request(url).post(hook('/test')).set(auth).send({ type: 'install.created' }).expect(202);
    // The first attempt fails, the retry succeeds: the streak is cleared.
    await waitFor(
      async () => {
        const rows: Array<{ failing_since: Date | null }> = await dataSource.query(
          `SELECT failing_since FROM webhook_endpoints WHERE app_id = $1 AND is_primary`,
          [appId],
        );
        return receiver.received.length >= 2 && rows[0].failing_since === null ? true : undefined;
      },
      { what: 'the streak to clear after a success' },
    );
    expect((await request(url).get(hook()).set(auth).expect(200)).body.enabled).toBe(true);
  });
});
