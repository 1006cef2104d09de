import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { DataSource } from 'typeorm';
import WebSocket from 'ws';
import { AccessTokens } from '../../src/modules/access/access-tokens';
import { GatewayClient } from '../support/gateway-client';
import { factories } from '../support/factories';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { LoggedInUser, login, raiseToEnterprise } from '../support/users';
import { waitFor } from '../support/wait-for';

const sessionOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid as string;

describe('gateway sockets end with their session (attack: a logged-out token keeps its socket)', () => {
  let env: TestEnvironment;
  let idp: TestIdentityProvider;
  let apiA: { app: NestFastifyApplication; url: string };
  let apiB: { app: NestFastifyApplication; url: string };
  let dataSource: DataSource;
  let bob: LoggedInUser;
  const clients: GatewayClient[] = [];
  let people = 0;

  async function ready(base: string, token: string): Promise<GatewayClient> {
    const client = new GatewayClient(new WebSocket(`${base.replace(/^http/, 'ws')}/v1/gateway?token=${encodeURIComponent(token)}`));
    clients.push(client);
    await client.next('ready');
    return client;
  }

  /** A new user (a second login with the same `sub` opens another session of the same user), and Bob's contact id for them. */
  async function newPerson(): Promise<{ who: { sub: string; email: string }; user: LoggedInUser; atBob: string }> {
    people += 1;
    const who = { sub: `uid-revoke-${people}`, email: `person${people}.revoke@example.com` };
    const user = await login(apiA.url, idp, { ...who, name: `Person ${people}` });
    const contact = await request(apiA.url)
      .post('/v1/contacts')
      .set(bob.auth)
      .send({ name: `Person ${people}`, email: who.email })
      .expect(201);
    return { who, user, atBob: contact.body.id as string };
  }

  beforeAll(async () => {
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create(idp.env);
    apiA = await env.startApi();
    apiB = await env.startApi();
    await env.startWorker();
    dataSource = apiA.app.get(DataSource);
    bob = await login(apiA.url, idp, { sub: 'uid-revoke-bob', name: 'Bob', email: 'bob.revoke@example.com' });
    await raiseToEnterprise(apiA.url, bob);
  });

  afterEach(() => GatewayClient.terminateAll(clients));

  afterAll(async () => {
    await env?.close();
    await idp?.close();
  });

  it('closes a socket on instance A with 4401 session revoked when its session logs out on instance B, and a message sent afterwards never reaches it', async () => {
    const { who, user: alice, atBob } = await newPerson();
    const loggedOut = await ready(apiA.url, alice.token);
    const otherSession = await login(apiA.url, idp, who);
    const kept = await ready(apiB.url, otherSession.token);

    await request(apiB.url).post('/v1/auth/logout').set(alice.auth).expect(204);
    await request(apiA.url).get('/v1/me').set(alice.auth).expect(401);
    const sent = await request(apiB.url)
      .post('/v1/messages')
      .set(bob.auth)
      .send({ recipient_id: atBob, content: 'after logout' })
      .expect(201);

    expect(await loggedOut.closed()).toEqual({ code: 4401, reason: 'session revoked' });
    // The message was delivered (to the session that is still live), just never to the logged-out one.
    await kept.next('message.created', (frame) => frame.data.id === sent.body.id);
    expect(loggedOut.of('message.created')).toEqual([]);
  });

  it('answers no sync and accepts no message.send on the socket of a logged-out session', async () => {
    const { user: alice } = await newPerson();
    const alicesContact = await request(apiA.url)
      .post('/v1/contacts')
      .set(alice.auth)
      .send({ name: 'Bob', email: 'bob.revoke@example.com' })
      .expect(201);
    const socket = await ready(apiA.url, alice.token);

    await request(apiB.url).post('/v1/auth/logout').set(alice.auth).expect(204);
    socket.send({ type: 'sync', id: 's-1', data: { since: new Date(0).toISOString() } });
    socket.send({ type: 'message.send', id: 'm-1', data: { recipient_id: alicesContact.body.id, content: 'sent with a revoked session' } });

    expect(await socket.closed()).toEqual({ code: 4401, reason: 'session revoked' });
    expect(socket.of('sync.complete')).toEqual([]);
    expect(socket.of('ack')).toEqual([]);
    expect(await dataSource.query(`SELECT id FROM messages WHERE sender_id = $1`, [alice.id])).toEqual([]);
  });

  it('ends only the logged-out session: sockets of the same user’s other session stay open on both instances', async () => {
    const { who, user: first } = await newPerson();
    const second = await login(apiA.url, idp, who);
    const firstOnA = await ready(apiA.url, first.token);
    const firstOnB = await ready(apiB.url, first.token);
    const secondOnA = await ready(apiA.url, second.token);
    const secondOnB = await ready(apiB.url, second.token);

    await request(apiA.url).post('/v1/auth/logout').set(first.auth).expect(204);

    expect(await firstOnA.closed()).toEqual({ code: 4401, reason: 'session revoked' });
    expect(await firstOnB.closed()).toEqual({ code: 4401, reason: 'session revoked' });
    await secondOnA.answersPing('p-a');
    await secondOnB.answersPing('p-b');
  });

  it('closes every socket of the user on both instances with 4410 soul deleted on DELETE /v1/soul; the session goes on and may reconnect', async () => {
    const { user: alice } = await newPerson();
    const onA = await ready(apiA.url, alice.token);
    const onB = await ready(apiB.url, alice.token);

    await request(apiB.url).delete('/v1/soul').set(alice.auth).expect(200);

    expect(await onA.closed()).toEqual({ code: 4410, reason: 'soul deleted' });
    expect(await onB.closed()).toEqual({ code: 4410, reason: 'soul deleted' });
    await (await ready(apiA.url, alice.token)).answersPing('p-again');
  });

  it('closes every socket of the user with 4403 user deleted when the user is deleted (an operator in psql)', async () => {
    const { user: alice } = await newPerson();
    const onA = await ready(apiA.url, alice.token);
    const onB = await ready(apiB.url, alice.token);

    await factories(dataSource).deleteUserOutsideService(alice.id);

    expect(await onA.closed()).toEqual({ code: 4403, reason: 'user deleted' });
    expect(await onB.closed()).toEqual({ code: 4403, reason: 'user deleted' });
  });

  it('closes a socket with 4401 token expired when its token expires, though the session is still live', async () => {
    const { user: alice } = await newPerson();
    const shortLived = await apiB.app.get(AccessTokens).issue(alice.id, sessionOf(alice.token), new Date(Date.now() + 1500));
    const socket = await ready(apiB.url, shortLived);

    expect(await socket.closed()).toEqual({ code: 4401, reason: 'token expired' });
    await request(apiB.url).get('/v1/me').set(alice.auth).expect(200);
  });

  it('keeps sockets open through an operator tier change, which reaches the other instance', async () => {
    const { user: alice } = await newPerson();
    const onA = await ready(apiA.url, alice.token);

    await request(apiB.url)
      .patch(`/v1/operator/users/${alice.id}`)
      .set('authorization', `Bearer ${OPERATOR_TOKEN}`)
      .send({ tier: 'pro' })
      .expect(200);
    // Instance A has seen the change once its HTTP limit for Alice is the pro one.
    await waitFor(async () => (await request(apiA.url).get('/v1/me').set(alice.auth)).headers['x-ratelimit-limit'] === '300', {
      what: 'the pro tier on instance A',
    });

    await onA.answersPing('p-tier');
  });
});
