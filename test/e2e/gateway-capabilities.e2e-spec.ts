import Redis from 'ioredis';
import request from 'supertest';
import WebSocket from 'ws';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';

interface Frame {
  type: string;
  id?: string;
  data: Record<string, unknown>;
}

/**
 * Realtime capability streams through the gateway. The runtime bridge (worker
 * role) publishes what it reads from a provider's SSE stream to
 * `${REDIS_PREFIX}:capability:<install_id>:<capability>`; here the test plays
 * the bridge and publishes on that channel itself.
 */
describe('real-time gateway: capability streams', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let publisher: Redis;
  let apiUrl: string;
  let user: LoggedInUser;
  let other: LoggedInUser;
  let installId: string;
  const sockets: WebSocket[] = [];

  async function open(token: string): Promise<{ socket: WebSocket; frames: Frame[]; next: (type: string) => Promise<Frame> }> {
    const socket = new WebSocket(`${apiUrl.replace(/^http/, 'ws')}/v1/gateway?token=${encodeURIComponent(token)}`);
    sockets.push(socket);
    const frames: Frame[] = [];
    socket.on('message', (data) => frames.push(JSON.parse((data as Buffer).toString()) as Frame));
    const next = (type: string) =>
      waitFor(
        async () => {
          const index = frames.findIndex((f) => f.type === type);
          return index === -1 ? undefined : frames.splice(index, 1)[0];
        },
        { what: `a ${type} frame`, timeoutMs: 5000, intervalMs: 10 },
      );
    await next('ready');
    return { socket, frames, next };
  }

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
    apiUrl = (await env.startApi()).url;
    // This worker never ticks the stream supervisor: the first tests play the bridge by publishing themselves.
    await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' } });
    publisher = new Redis(env.env.REDIS_URL);

    const developer = await onboardDeveloper(apiUrl, smtp, 'streams@example.com');
    const app = await registerApp(apiUrl, developer);
    const auth = { authorization: `Bearer ${await appToken(apiUrl, app)}` };
    const capabilities = (goodPackageCapabilities() as Array<{ type: string }>).filter((c) => c.type !== 'action');
    const { packageId } = await publishPackage(apiUrl, auth, {
      appId: app.id,
      name: 'Acme Finance',
      slug: 'acme-ticker',
      description: 'Balances, transfers and a live ticker',
      riskTier: 'data_only',
      runtimeUrl: runtime.url,
      capabilities,
    });

    user = await login(apiUrl, idp, { sub: 'uid-streams-1', name: 'Viewer', email: 'viewer@example.com' });
    other = await login(apiUrl, idp, { sub: 'uid-streams-2', name: 'Other', email: 'other@example.com' });
    installId = (await request(apiUrl).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201)).body.id;
  });

  afterAll(async () => {
    for (const socket of sockets) socket.terminate();
    publisher?.disconnect();
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  it('relays capability.data and capability.stale for a subscribed install until unsubscribed', async () => {
    const client = await open(user.token);
    const channel = `${env.env.REDIS_PREFIX}:capability:${installId}:ticker`;
    client.socket.send(JSON.stringify({ type: 'capability.subscribe', id: 's-1', data: { install_id: installId, capability: 'ticker' } }));
    expect(await client.next('ack')).toEqual({
      type: 'ack',
      id: 's-1',
      data: { install_id: installId, capability: 'ticker', subscribed: true },
    });

    await publisher.publish(channel, JSON.stringify({ type: 'data', data: { price: 101.5 } }));
    expect((await client.next('capability.data')).data).toEqual({
      install_id: installId,
      capability: 'ticker',
      data: { price: 101.5 },
      at: expect.any(String),
    });
    await publisher.publish(channel, JSON.stringify({ type: 'stale', reason: 'stream disconnected', since: '2026-01-01T00:00:00.000Z' }));
    expect((await client.next('capability.stale')).data).toEqual({
      install_id: installId,
      capability: 'ticker',
      reason: 'stream disconnected',
      since: '2026-01-01T00:00:00.000Z',
    });

    client.socket.send(
      JSON.stringify({ type: 'capability.unsubscribe', id: 's-2', data: { install_id: installId, capability: 'ticker' } }),
    );
    expect((await client.next('ack')).data).toMatchObject({ subscribed: false });
    await publisher.publish(channel, JSON.stringify({ type: 'data', data: { price: 1 } }));
    await new Promise((r) => setTimeout(r, 300));
    expect(client.frames.filter((f) => f.type === 'capability.data')).toEqual([]);
  });

  it('refuses a capability that is not a realtime capability of the install with NOT_FOUND', async () => {
    const client = await open(user.token);
    client.socket.send(JSON.stringify({ type: 'capability.subscribe', id: 'y', data: { install_id: installId, capability: 'balance' } }));
    expect((await client.next('error')).data).toEqual({
      code: 'NOT_FOUND',
      message: `Install ${installId} has no realtime capability balance`,
      status: 404,
    });
  });

  it('refuses to subscribe to another user’s install with NOT_FOUND', async () => {
    const client = await open(other.token);
    client.socket.send(JSON.stringify({ type: 'capability.subscribe', id: 'x', data: { install_id: installId, capability: 'ticker' } }));
    expect((await client.next('error')).data).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('relays data from the provider runtime’s SSE stream end to end: subscribe, bridge supervisor, Redis, gateway', async () => {
    // A worker whose stream supervisor looks for subscriptions every 250 ms.
    await env.startWorker({ env: { RUNTIME_TICK_MS: '250' } });
    const client = await open(user.token);
    client.socket.send(
      JSON.stringify({ type: 'capability.subscribe', id: 'live-1', data: { install_id: installId, capability: 'ticker' } }),
    );
    expect((await client.next('ack')).data).toMatchObject({ subscribed: true });
    const frame = await waitFor(() => client.frames.find((f) => f.type === 'capability.data'), {
      what: 'live ticker data',
      timeoutMs: 15_000,
    });
    expect(frame.data).toMatchObject({ install_id: installId, capability: 'ticker', data: { pair: 'EURUSD', rate: expect.any(Number) } });
    expect(runtime.requestsTo('/capabilities/ticker/stream').length).toBeGreaterThan(0);
  });
});
