import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { DataSource } from 'typeorm';
import WebSocket from 'ws';
import { AccessTokens } from '../../src/modules/access/access-tokens';
import { GatewayClient } from '../support/gateway-client';
import { MessagesService } from '../../src/modules/messages/messages.service';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { LoggedInUser, login, raiseToEnterprise } from '../support/users';
import { waitFor } from '../support/wait-for';

const HEARTBEAT_MS = 300;

describe('real-time gateway (WebSocket, two api instances)', () => {
  let env: TestEnvironment;
  let idp: TestIdentityProvider;
  let apiA: { app: NestFastifyApplication; url: string };
  let apiB: { app: NestFastifyApplication; url: string };
  let alice: LoggedInUser;
  let bob: LoggedInUser;
  let carol: LoggedInUser;
  let bobAtAlice: string; // alice's contact id for bob
  let aliceAtBob: string;
  const clients: GatewayClient[] = [];
  let users = 0;

  function wsUrl(base: string, query: string): string {
    return `${base.replace(/^http/, 'ws')}/v1/gateway?${query}`;
  }

  function connect(base: string, token: string, options: WebSocket.ClientOptions & { since?: string } = {}): GatewayClient {
    const { since, ...wsOptions } = options;
    const query = `token=${encodeURIComponent(token)}${since ? `&since=${encodeURIComponent(since)}` : ''}`;
    const client = new GatewayClient(new WebSocket(wsUrl(base, query), wsOptions));
    clients.push(client);
    return client;
  }

  async function ready(base: string, token: string, options: WebSocket.ClientOptions & { since?: string } = {}): Promise<GatewayClient> {
    const client = connect(base, token, options);
    await client.next('ready');
    return client;
  }

  async function newUser(name: string): Promise<LoggedInUser> {
    users += 1;
    const user = await login(apiA.url, idp, { sub: `uid-gw-${users}`, name, email: `${name.toLowerCase()}.gw@example.com` });
    await raiseToEnterprise(apiA.url, user);
    return user;
  }

  async function addContact(owner: LoggedInUser, name: string): Promise<string> {
    const res = await request(apiA.url)
      .post('/v1/contacts')
      .set(owner.auth)
      .send({ name, email: `${name.toLowerCase()}.gw@example.com` })
      .expect(201);
    return res.body.id;
  }

  beforeAll(async () => {
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create({ ...idp.env, GATEWAY_HEARTBEAT_MS: String(HEARTBEAT_MS) });
    apiA = await env.startApi();
    apiB = await env.startApi();
    await env.startWorker();
    alice = await newUser('Alice');
    bob = await newUser('Bob');
    carol = await newUser('Carol');
    bobAtAlice = await addContact(alice, 'Bob');
    aliceAtBob = await addContact(bob, 'Alice');
    // Carol knows Alice, but Alice has not added Carol: not mutual, so no presence between them.
    await addContact(carol, 'Alice');
  });

  afterEach(() => GatewayClient.terminateAll(clients));

  afterAll(async () => {
    await env?.close();
    await idp?.close();
  });

  describe('connect', () => {
    it('closes with 4401 when the token is missing, malformed or expired', async () => {
      const missing = new GatewayClient(new WebSocket(wsUrl(apiA.url, '')));
      expect(await missing.closed()).toEqual({ code: 4401, reason: 'missing token query parameter' });
      expect(await connect(apiA.url, 'not-a-jwt').closed()).toEqual({ code: 4401, reason: 'token invalid' });
      const tokens = apiA.app.get(AccessTokens);
      const sid = JSON.parse(Buffer.from(alice.token.split('.')[1], 'base64url').toString()).sid as string;
      const expired = await tokens.issue(alice.id, sid, new Date(Date.now() - 60_000));
      expect(await connect(apiA.url, expired).closed()).toEqual({ code: 4401, reason: 'token expired' });
    });

    it('closes with 4403 when the user behind a valid token no longer exists', async () => {
      const token = await apiA.app.get(AccessTokens).issue('usr_deleted000000000000', 'ses_gone', new Date(Date.now() + 60_000));
      expect(await connect(apiA.url, token).closed()).toEqual({ code: 4403, reason: 'user deleted' });
    });

    it('sends ready with the user, session, heartbeat interval and contacts’ presence', async () => {
      const client = connect(apiB.url, alice.token);
      const frame = await client.next('ready');
      expect(frame.data).toEqual({
        user: { id: alice.id, tier: 'enterprise' },
        session_id: expect.stringMatching(/^ses_/),
        connection_id: expect.any(String),
        heartbeat_ms: HEARTBEAT_MS,
        expires_at: expect.any(String),
        presence: [{ contact_id: bobAtAlice, status: 'offline' }],
      });
    });

    it('sends session.expiring before the token expires, then closes with 4401', async () => {
      const sid = JSON.parse(Buffer.from(alice.token.split('.')[1], 'base64url').toString()).sid as string;
      const shortLived = await apiA.app.get(AccessTokens).issue(alice.id, sid, new Date(Date.now() + 2000));
      const client = connect(apiA.url, shortLived);
      await client.next('ready');
      const notice = await client.next('session.expiring');
      expect(new Date(notice.data.expires_at as string).getTime()).toBeGreaterThan(Date.now());
      expect(await client.closed()).toEqual({ code: 4401, reason: 'token expired' });
    });
  });

  describe('messaging across instances', () => {
    it('delivers message.send on instance A to the recipient and the sender’s other session on B, acked with the client id', async () => {
      const sender = await ready(apiA.url, alice.token);
      const senderElsewhere = await ready(apiB.url, alice.token);
      const recipient = await ready(apiB.url, bob.token);

      sender.send({ type: 'message.send', id: 'c-1', data: { recipient_id: bobAtAlice, content: 'hi Bob' } });
      const ack = await sender.next('ack', (f) => f.id === 'c-1');
      expect(ack.data).toEqual({ id: expect.stringMatching(/^msg_/), status: 'sent', created_at: expect.any(String) });

      const inbound = await recipient.next('message.created');
      expect(inbound.data).toEqual({
        id: ack.data.id,
        direction: 'inbound',
        sender_contact_id: aliceAtBob,
        recipient_id: bob.id,
        recipient_kind: 'contact',
        type: 'text',
        content: 'hi Bob',
        status: 'sent',
        created_at: ack.data.created_at,
      });
      const outbound = await senderElsewhere.next('message.created');
      expect(outbound.data).toMatchObject({ id: ack.data.id, direction: 'outbound', recipient_id: bobAtAlice });

      // The first delivery to Bob's socket is reported back to the sender's sessions.
      const delivered = await sender.next('message.delivered');
      expect(delivered.data).toEqual({ message_id: ack.data.id, contact_id: bobAtAlice, delivered_at: expect.any(String) });
      // The sending socket has its ack; it is not echoed its own message.
      await sender.none('message.created');
    });

    it('applies the same rules as POST /v1/messages: validation, unknown recipients and idempotency', async () => {
      const client = await ready(apiA.url, alice.token);
      client.send({ type: 'message.send', id: 'bad-1', data: { recipient_id: bobAtAlice, content: '   ' } });
      expect(await client.next('error', (f) => f.id === 'bad-1')).toEqual({
        type: 'error',
        id: 'bad-1',
        data: { code: 'BAD_REQUEST', message: 'content must not be only whitespace', status: 400 },
      });
      client.send({ type: 'message.send', id: 'bad-2', data: { recipient_id: 'con_nobody', content: 'x' } });
      expect((await client.next('error', (f) => f.id === 'bad-2')).data).toMatchObject({ code: 'NOT_FOUND', status: 404 });
      client.send({ type: 'message.send', id: 'bad-3', data: { recipient_id: bobAtAlice, content: 'x', extra: 1 } });
      expect((await client.next('error', (f) => f.id === 'bad-3')).data).toMatchObject({
        code: 'BAD_REQUEST',
        message: 'extra is not a known field',
      });

      const data = { recipient_id: bobAtAlice, content: 'once', idempotency_key: 'idem-gw-1' };
      client.send({ type: 'message.send', id: 'k-1', data });
      const first = await client.next('ack', (f) => f.id === 'k-1');
      client.send({ type: 'message.send', id: 'k-2', data });
      const second = await client.next('ack', (f) => f.id === 'k-2');
      expect(second.data).toEqual(first.data);
      expect(second).toMatchObject({ replayed: true });
    });

    it('delivers a message sent over HTTP to a group to every linked member', async () => {
      const group = await request(apiA.url)
        .post('/v1/groups')
        .set(alice.auth)
        .send({ name: 'Team', member_ids: [bobAtAlice] })
        .expect(201);
      const recipient = await ready(apiB.url, bob.token);
      const senderSession = await ready(apiA.url, alice.token);
      const sent = await request(apiA.url)
        .post('/v1/messages')
        .set(alice.auth)
        .send({ recipient_id: group.body.id, content: 'team!' })
        .expect(201);
      expect((await recipient.next('message.created')).data).toMatchObject({ id: sent.body.id, recipient_kind: 'group', content: 'team!' });
      // Sent over HTTP, so every WebSocket session of the sender gets it.
      expect((await senderSession.next('message.created')).data).toMatchObject({ id: sent.body.id, direction: 'outbound' });
    });

    it('reports message.read to the sender', async () => {
      const sender = await ready(apiA.url, alice.token);
      const reader = await ready(apiB.url, bob.token);
      sender.send({ type: 'message.send', id: 'r-1', data: { recipient_id: bobAtAlice, content: 'read me' } });
      const { data } = await sender.next('ack', (f) => f.id === 'r-1');
      await reader.next('message.created', (f) => f.data.id === data.id);
      reader.send({ type: 'message.read', id: 'read-1', data: { message_ids: [data.id] } });
      expect((await reader.next('ack', (f) => f.id === 'read-1')).data).toEqual({ read: [data.id] });
      expect((await sender.next('message.read')).data).toEqual({
        message_id: data.id,
        contact_id: bobAtAlice,
        read_at: expect.any(String),
      });
    });

    it('relays typing to the contact’s user on the other instance', async () => {
      const typist = await ready(apiA.url, bob.token);
      const watcher = await ready(apiB.url, alice.token);
      typist.send({ type: 'typing', data: { recipient_id: aliceAtBob } });
      expect((await watcher.next('typing')).data).toEqual({ contact_id: bobAtAlice, recipient_kind: 'contact', state: 'started' });
    });

    it('replays messages received while offline on reconnect with since, recognisable by id', async () => {
      const since = new Date().toISOString();
      const sent = await request(apiA.url)
        .post('/v1/messages')
        .set(alice.auth)
        .send({ recipient_id: bobAtAlice, content: 'while away' })
        .expect(201);
      // Bob is offline until the live fan-out is over, so what he gets can only come from the replay.
      await waitFor(
        async () => {
          const rows = await apiA.app
            .get(DataSource)
            .query(`SELECT 1 FROM events WHERE payload->>'message_id' = $1 AND dispatched_at IS NOT NULL`, [sent.body.id]);
          return rows.length === 1;
        },
        { what: 'the message.created fan-out' },
      );
      const client = connect(apiB.url, bob.token, { since });
      await client.next('ready');
      expect((await client.next('message.created', (f) => f.data.id === sent.body.id)).data).toMatchObject({
        content: 'while away',
        direction: 'inbound',
        replayed: true,
      });
      expect((await client.next('sync.complete')).data).toMatchObject({ count: expect.any(Number), more: false });
    });
  });

  describe('presence', () => {
    it('announces online, a chosen status and offline to mutual contacts only', async () => {
      const watcher = await ready(apiA.url, alice.token);
      const outsider = await ready(apiA.url, carol.token);
      const bobClient = await ready(apiB.url, bob.token);
      expect((await watcher.next('presence.updated', (f) => f.data.contact_id === bobAtAlice)).data).toMatchObject({ status: 'online' });
      bobClient.send({ type: 'presence.set', id: 'p-1', data: { status: 'dnd' } });
      await bobClient.next('ack', (f) => f.id === 'p-1');
      expect((await watcher.next('presence.updated', (f) => f.data.contact_id === bobAtAlice)).data).toMatchObject({ status: 'dnd' });
      bobClient.close();
      expect((await watcher.next('presence.updated', (f) => f.data.contact_id === bobAtAlice)).data).toMatchObject({ status: 'offline' });
      await outsider.none('presence.updated', (f) => f.data.user_id !== carol.id, 50);
    });

    it('drops a client that stops answering pings after two intervals and marks it offline', async () => {
      const watcher = await ready(apiA.url, alice.token);
      const silent = await ready(apiB.url, bob.token, { autoPong: false });
      await watcher.next('presence.updated', (f) => f.data.contact_id === bobAtAlice && f.data.status === 'online');
      const started = Date.now();
      expect((await silent.closed()).code).toBe(1006);
      expect(Date.now() - started).toBeLessThan(HEARTBEAT_MS * 5);
      expect((await watcher.next('presence.updated', (f) => f.data.contact_id === bobAtAlice)).data).toMatchObject({ status: 'offline' });
    });
  });

  describe('invalid frames and abuse limits', () => {
    it('answers malformed frames with error events and keeps the connection open', async () => {
      const client = await ready(apiA.url, alice.token);
      client.socket.send('not json');
      expect((await client.next('error')).data).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
      client.send({ type: 'nope', id: 'u-1' });
      expect((await client.next('error', (f) => f.id === 'u-1')).data.message).toMatch(/^type must be one of/);
      client.send({ type: 'presence.set', id: 'u-2', data: { status: 'sleeping' } });
      expect((await client.next('error', (f) => f.id === 'u-2')).data.code).toBe('BAD_REQUEST');
      client.send({ type: 'capability.subscribe', id: 'u-3', data: { install_id: 'inst_notmine', capability: 'ticker' } });
      expect((await client.next('error', (f) => f.id === 'u-3')).data.code).toBe('NOT_FOUND');
      client.socket.send(Buffer.from([1, 2, 3]));
      expect((await client.next('error')).data.message).toMatch(/text frames/);
      client.send({ type: 'ping', id: 'still-here' });
      expect(await client.next('pong')).toMatchObject({ id: 'still-here' });
    });

    it('answers a send the database cannot take right now (its pool exhausted, or PostgreSQL away) with a retryable SERVICE_UNAVAILABLE, not INTERNAL_ERROR', async () => {
      const messages = apiA.app.get(MessagesService);
      const send = jest
        .spyOn(messages, 'send')
        .mockRejectedValueOnce(Object.assign(new Error('timeout exceeded when trying to connect'), { name: 'Error' }));
      try {
        const client = await ready(apiA.url, alice.token);
        client.send({ type: 'message.send', id: 'busy-1', data: { recipient_id: 'con_doesnotmatter000000000', content: 'hi' } });
        expect((await client.next('error', (f) => f.id === 'busy-1')).data).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503 });
        client.send({ type: 'ping', id: 'after-busy' });
        expect(await client.next('pong')).toMatchObject({ id: 'after-busy' });
      } finally {
        send.mockRestore();
      }
    });

    it('closes with 1009 on a frame over 64 KB', async () => {
      const client = await ready(apiA.url, alice.token);
      client.send({ type: 'ping', data: { pad: 'x'.repeat(70 * 1024) } });
      expect((await client.closed()).code).toBe(1009);
    });

    it('refuses frames over the rate with RATE_LIMITED, then closes a client that keeps flooding with 4429', async () => {
      const client = await ready(apiA.url, alice.token);
      for (let i = 0; i < 200; i++) client.send({ type: 'ping' });
      expect((await client.next('error')).data).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
      expect(await client.closed()).toEqual({ code: 4429, reason: 'frame rate limit exceeded' });
    });
  });

  it('closes sockets with 1001 when the api shuts down', async () => {
    const api = await env.startApi();
    const client = await ready(api.url, alice.token);
    const closing = api.app.close();
    expect(await client.closed()).toEqual({ code: 1001, reason: 'server shutting down' });
    await closing;
  });

  it('answers a plain HTTP GET with 400 and serves the event reference in the OpenAPI document', async () => {
    const res = await request(apiA.url).get('/v1/gateway').expect(400);
    expect(res.body.error).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    const doc = await request(apiA.url).get('/docs/openapi.json').expect(200);
    const description: string = doc.body.paths['/v1/gateway'].get.description;
    expect(description).toContain('# Real-time gateway: event reference');
    expect(description).toContain('`message.created`');
  });

  describe('separate processes', () => {
    async function spawnApi() {
      const api = env.spawnRole('main', { APP_ROLE: 'api', PORT: '0', GATEWAY_HEARTBEAT_MS: String(HEARTBEAT_MS) });
      const [, port] = await api.waitForOutput(/api listening on http:\/\/[^:]+:(\d+)/);
      return { api, url: `http://127.0.0.1:${port}` };
    }

    it('closes sockets with 1001 on SIGTERM and exits 0', async () => {
      const { api, url } = await spawnApi();
      const client = await ready(url, alice.token);
      api.child.kill('SIGTERM');
      expect(await client.closed()).toEqual({ code: 1001, reason: 'server shutting down' });
      expect((await api.exited).code).toBe(0);
    });

    it('announces the users of a crashed instance offline from the surviving instances', async () => {
      const watcher = await ready(apiA.url, alice.token);
      const { api, url } = await spawnApi();
      const victim = await ready(url, bob.token);
      await watcher.next('presence.updated', (f) => f.data.contact_id === bobAtAlice && f.data.status === 'online');
      api.child.kill('SIGKILL');
      await victim.closed();
      const offline = await watcher.next('presence.updated', (f) => f.data.contact_id === bobAtAlice, HEARTBEAT_MS * 10);
      expect(offline.data.status).toBe('offline');
    });
  });
});
