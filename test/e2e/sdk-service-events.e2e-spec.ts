import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { ServiceEventError, ServiceEvents } from '@soul-service/runtime-sdk';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, registerApp, RegisteredApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';

/** The bank package's balance (a runtime for conformance to probe) and its `meeting_updates` webhook capability. */
const capabilities = () =>
  (goodPackageCapabilities() as Array<{ name: string }>).filter((c) => c.name === 'balance' || c.name === 'meeting_updates');

interface SurfaceComponent {
  package: { installId: string };
  capability: { name: string; mode: string };
  component: string;
  data: Record<string, unknown> | null;
}

/**
 * The runtime SDK's `ServiceEvents` against the real service: an app token
 * from the token endpoint with the app's client credentials, events signed
 * with the app's webhook secret, accepted by the inbound endpoint and shown
 * to the installed user on the capability's surface; refusals surface as
 * `ServiceEventError` with the service's problem and request id.
 */
describe('runtime SDK: pushing events to the service', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let app: RegisteredApp;
  let user: LoggedInUser;
  let installId: string;
  let events: ServiceEvents;
  /** Every request the client made: its path and the request id it sent. */
  const sent: Array<{ path: string; requestId: string }> = [];
  const recordingFetch: typeof fetch = (input, init) => {
    sent.push({ path: new URL(input).pathname, requestId: (init?.headers as Record<string, string>)['x-service-request-id'] });
    return fetch(input, init);
  };

  const meeting = (meetingId: string, extra: Record<string, unknown> = {}) => ({
    event: 'meeting.updated',
    action: 'moved',
    userId: user.id,
    data: { meetingId, title: 'Mortgage review', startsAt: '2026-12-01T10:00:00Z' },
    ...extra,
  });
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('the event was accepted');
      },
      (error: unknown) => {
        expect(error).toBeInstanceOf(ServiceEventError);
        return error as ServiceEventError;
      },
    );

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start({ capabilities: capabilities() });
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
    url = (await env.startApi()).url;
    // The worker hands accepted events to surfaces (outbox); its state poller ticks only hourly here.
    await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' } });
    const developer = await onboardDeveloper(url, smtp, 'sdk-events@example.com');
    // Registering with a webhook_url creates the webhook profile and shows its signing secret once.
    app = await registerApp(url, developer);
    expect(app.webhook_secret).toMatch(/^whsec_/);
    const appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    const { packageId } = await publishPackage(url, appAuth, {
      appId: app.id,
      name: 'SDK Advisor',
      slug: 'sdk-advisor',
      description: 'Balances, and meetings with your advisor pushed as they change',
      riskTier: 'data_only',
      runtimeUrl: runtime.url,
      capabilities: capabilities(),
    });
    user = await login(url, idp, { sub: 'uid-sdk-events', name: 'Eve', email: 'eve@example.com' });
    installId = (await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201)).body.id;
    events = new ServiceEvents({
      serviceUrl: url,
      clientId: app.client_id,
      clientSecret: app.client_secret,
      signingSecret: app.webhook_secret!,
      fetch: recordingFetch,
    });
  }, 90_000);

  afterAll(async () => {
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  it('sends a signed event for an installed user: 202, and the user sees it on the capability’s surface', async () => {
    const ack = await events.send(meeting('mtg_sdk_1'));
    expect(ack).toEqual({ status: 'accepted', event_id: expect.stringMatching(/^evt_/), processed_at: expect.any(String) });

    const shown = await waitFor(
      async () => {
        const res = await request(url).get('/v1/surfaces/connection_profile').set(user.auth).expect(200);
        return (res.body.components as SurfaceComponent[]).find(
          (c) => c.capability.name === 'meeting_updates' && c.data?.meetingId === 'mtg_sdk_1',
        );
      },
      { what: 'the pushed meeting on the connection_profile surface' },
    );
    expect(shown).toMatchObject({
      package: { installId },
      capability: { name: 'meeting_updates', mode: 'webhook' },
      component: 'meeting_prep',
      data: { meetingId: 'mtg_sdk_1', title: 'Mortgage review', startsAt: '2026-12-01T10:00:00Z' },
    });
  });

  it('a resend of the same event (same timestamp and bytes) is acknowledged with the first event’s id: why retries are safe', async () => {
    const event = meeting('mtg_sdk_2', { timestamp: new Date().toISOString() });
    const first = await events.send(event);
    const again = await events.send(event);
    expect(again.event_id).toBe(first.event_id);
    const later = await events.send({ ...event, timestamp: new Date(Date.now() + 1).toISOString() });
    expect(later.event_id).not.toBe(first.event_id);
    // One app token for every event so far.
    expect(sent.filter((r) => r.path === '/v1/auth/token')).toHaveLength(1);
    expect(sent.filter((r) => r.path === '/v1/providers/runtime/webhook')).toHaveLength(4);
  });

  it('a wrong signing secret is refused with 401 invalid_signature, thrown at once with the request id', async () => {
    const wrong = new ServiceEvents({
      serviceUrl: url,
      clientId: app.client_id,
      clientSecret: app.client_secret,
      signingSecret: `whsec_${randomBytes(32).toString('base64')}`,
      fetch: recordingFetch,
    });
    const error = await refusal(wrong.send(meeting('mtg_sdk_3')));
    // The service kept the id the client sent, so the client knows it even when no answer comes back.
    expect(error.requestId).toBe(sent.at(-1)!.requestId);
    expect(error).toMatchObject({
      status: 401,
      code: 'invalid_signature',
      type: 'https://docs.example.com/developers/errors#invalid_signature',
      detail: 'X-Signature-256 does not match the request body',
      requestId: expect.stringMatching(/^req_/),
      attempts: 1,
    });
  });

  it('an event type the descriptor does not declare is refused with 400, naming the field', async () => {
    const error = await refusal(events.send({ ...meeting('mtg_sdk_4'), event: 'meeting.deleted' }));
    expect(error).toMatchObject({
      status: 400,
      code: 'invalid_format',
      detail: 'event "meeting.deleted" is not registered by this app\'s packages',
      field: 'event',
      fieldErrors: [{ field: 'event', message: expect.stringContaining('meeting.deleted') }],
      requestId: expect.stringMatching(/^req_/),
      attempts: 1,
    });
  });

  it('data that does not match the event’s schema is refused with 400 and every field error', async () => {
    const error = await refusal(events.send({ ...meeting('mtg_sdk_5'), data: { meetingId: 'mtg_sdk_5' } }));
    expect(error).toMatchObject({ status: 400, code: 'invalid_format', field: 'data', requestId: expect.stringMatching(/^req_/) });
    expect(error.fieldErrors).toEqual([{ field: 'data', message: expect.stringContaining('startsAt'), code: 'invalid_format' }]);
  });
});
