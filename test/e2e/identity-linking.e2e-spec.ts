import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import WebSocket from 'ws';
import { GatewayClient } from '../support/gateway-client';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { LoggedInUser, raiseToEnterprise } from '../support/users';
import { waitFor } from '../support/wait-for';

/** Every `usr_` id in a JSON value. */
function userIdsIn(value: unknown): string[] {
  return JSON.stringify(value).match(/usr_[A-Za-z0-9_-]+/g) ?? [];
}

/**
 * Each test is an attack on contact linking, written from the attacker's side:
 * a login claiming someone else's address, a login switching address, a race
 * for one address, and probing addresses for accounts.
 */
describe('identity: verified emails and contact linking', () => {
  let env: TestEnvironment;
  let idp: TestIdentityProvider;
  let url: string;
  let dataSource: DataSource;
  const sockets: GatewayClient[] = [];

  async function signIn(who: { sub: string; email: string; emailVerified?: boolean; name?: string }): Promise<LoggedInUser> {
    const res = await request(url)
      .post('/v1/auth/login')
      .send({ firebase_token: await idp.token({ name: who.sub, ...who }) })
      .expect(200);
    return { id: res.body.user.id, token: res.body.token, auth: { authorization: `Bearer ${res.body.token}` } };
  }

  /** A user on the enterprise tier, so many calls in one test stay under the rate limit. */
  async function newUser(sub: string, email: string): Promise<LoggedInUser> {
    const user = await signIn({ sub, email });
    await raiseToEnterprise(url, user);
    return user;
  }

  async function addContact(owner: LoggedInUser, name: string, email: string): Promise<Record<string, unknown>> {
    return (await request(url).post('/v1/contacts').set(owner.auth).send({ name, email }).expect(201)).body;
  }

  async function send(sender: LoggedInUser, recipientId: string, content: string): Promise<string> {
    const res = await request(url).post('/v1/messages').set(sender.auth).send({ recipient_id: recipientId, content }).expect(201);
    return res.body.id;
  }

  async function history(user: LoggedInUser, withId: string): Promise<Array<Record<string, unknown>>> {
    const res = await request(url).get(`/v1/messages?with=${withId}`).set(user.auth).expect(200);
    return res.body.messages;
  }

  async function connect(user: LoggedInUser): Promise<GatewayClient> {
    const client = new GatewayClient(new WebSocket(`${url.replace(/^http/, 'ws')}/v1/gateway?token=${encodeURIComponent(user.token)}`));
    sockets.push(client);
    await client.next('ready');
    return client;
  }

  /** Who the message reached: the recipient user of its (only) delivery. */
  async function recipientUserOf(messageId: string): Promise<string | null> {
    const rows: Array<{ recipient_user_id: string | null }> = await dataSource.query(
      `SELECT recipient_user_id FROM message_recipients WHERE message_id = $1`,
      [messageId],
    );
    expect(rows).toHaveLength(1);
    return rows[0].recipient_user_id;
  }

  /** Waits until the sender's own session has the fan-out of `messageId`: every other socket has had its chance by then. */
  async function fannedOut(senderSocket: GatewayClient, messageId: string): Promise<void> {
    await senderSocket.next('message.created', (f) => f.data.id === messageId);
  }

  beforeAll(async () => {
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create(idp.env);
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    // The worker turns message.created into socket frames (outbox fan-out).
    await env.startWorker();
  });

  afterEach(() => {
    for (const client of sockets.splice(0)) client.socket.terminate();
  });

  afterAll(async () => {
    await env?.close();
    await idp?.close();
  });

  it('gives an impostor whose token claims dave@example.com unverified nothing addressed to Dave; Dave gets it once he proves the address', async () => {
    const impostor = await signIn({ sub: 'uid-impostor', email: 'dave@example.com', emailVerified: false });
    const alice = await newUser('uid-alice', 'alice@example.com');
    const impostorSocket = await connect(impostor);
    const aliceSocket = await connect(alice);

    const daveAtAlice = await addContact(alice, 'Dave', 'dave@example.com');
    const first = await send(alice, daveAtAlice.id as string, 'for Dave only');
    await fannedOut(aliceSocket, first);

    // Not delivered to the impostor: no frame, not linked, nothing in their history or a sync.
    expect(await impostorSocket.pending('message.created')).toEqual([]);
    expect(await recipientUserOf(first)).toBeNull();
    expect(daveAtAlice).not.toHaveProperty('linked_user_id');
    expect(userIdsIn(daveAtAlice)).toEqual([]);
    const aliceAtImpostor = await addContact(impostor, 'Alice', 'alice@example.com');
    expect(await history(impostor, aliceAtImpostor.id as string)).toEqual([]);
    impostorSocket.send({ type: 'sync', id: 's-1', data: { since: new Date(0).toISOString() } });
    expect((await impostorSocket.next('sync.complete')).data).toMatchObject({ count: 0 });

    // The real Dave proves the address: from now on the contact reaches him, and only him.
    const dave = await signIn({ sub: 'uid-dave', email: 'Dave@Example.com', emailVerified: true });
    const daveSocket = await connect(dave);
    const second = await send(alice, daveAtAlice.id as string, 'hello Dave');
    expect((await daveSocket.next('message.created', (f) => f.data.id === second)).data).toMatchObject({
      direction: 'inbound',
      content: 'hello Dave',
    });
    await fannedOut(aliceSocket, second);
    expect(await impostorSocket.pending('message.created')).toEqual([]);
    expect(await recipientUserOf(second)).toBe(dave.id);
    expect(await history(impostor, aliceAtImpostor.id as string)).toEqual([]);
    const aliceAtDave = await addContact(dave, 'Alice', 'alice@example.com');
    // The message sent while nobody held the address waited for Dave (the pending-contact rule, issue 23); never for the impostor.
    expect((await history(dave, aliceAtDave.id as string)).map((m) => m.content)).toEqual(['hello Dave', 'for Dave only']);
    expect(await recipientUserOf(first)).toBe(dave.id);
  });

  it('never re-points links when a user logs in again claiming another address, verified or not', async () => {
    // Mallory signed up first, so an "oldest user with that email" rule would pick her.
    const mallory = await newUser('uid-mallory', 'mallory@example.com');
    const erin = await newUser('uid-erin', 'erin@example.com');
    const alice = await newUser('uid-alice-2', 'alice2@example.com');
    const erinAtAlice = await addContact(alice, 'Erin', 'erin@example.com');
    expect(await recipientUserOf(await send(alice, erinAtAlice.id as string, 'one'))).toBe(erin.id);

    // Mallory logs in again claiming Erin's address without proof of it.
    await signIn({ sub: 'uid-mallory', email: 'erin@example.com', emailVerified: false });
    const mallorySocket = await connect(mallory);
    // The existing link, re-evaluated by an edit, still reaches Erin.
    const renamed = await request(url)
      .patch(`/v1/contacts/${erinAtAlice.id as string}`)
      .set(alice.auth)
      .send({ name: 'Erin R.', email: 'ERIN@example.com' })
      .expect(200);
    expect(await recipientUserOf(await send(alice, erinAtAlice.id as string, 'two'))).toBe(erin.id);
    expect(userIdsIn(renamed.body)).toEqual([]);
    // A contact added afterwards reaches Erin too.
    const carol = await newUser('uid-carol-2', 'carol2@example.com');
    const erinAtCarol = await addContact(carol, 'Erin', 'erin@example.com');
    expect(await recipientUserOf(await send(carol, erinAtCarol.id as string, 'three'))).toBe(erin.id);

    // A verified claim of another address of her own changes nothing for Erin either.
    await signIn({ sub: 'uid-mallory', email: 'mallory.new@example.com', emailVerified: true });
    expect(await recipientUserOf(await send(alice, erinAtAlice.id as string, 'four'))).toBe(erin.id);
    expect(await mallorySocket.pending('message.created', 500)).toEqual([]);
    const rows: Array<{ id: string; verified_email: string | null }> = await dataSource.query(
      `SELECT id, verified_email FROM users WHERE id = ANY($1) ORDER BY verified_email`,
      [[mallory.id, erin.id]],
    );
    expect(rows).toEqual([
      { id: erin.id, verified_email: 'erin@example.com' },
      { id: mallory.id, verified_email: 'mallory.new@example.com' },
    ]);
  });

  it('lets one verified address belong to one user only: the database refuses a second holder, the latest verified login takes it, and racing logins all succeed', async () => {
    const frank = await newUser('uid-frank', 'frank@example.com');
    const other = await newUser('uid-frank-other', 'frank.other@example.com');
    await expect(dataSource.query(`UPDATE users SET verified_email = 'frank@example.com' WHERE id = $1`, [other.id])).rejects.toMatchObject(
      {
        driverError: expect.objectContaining({ code: '23505' }),
      },
    );

    const alice = await newUser('uid-alice-3', 'alice3@example.com');
    const aliceSocket = await connect(alice);
    const frankAtAlice = await addContact(alice, 'Frank', 'frank@example.com');
    expect(await recipientUserOf(await send(alice, frankAtAlice.id as string, 'to the first holder'))).toBe(frank.id);

    // A newer verified proof of the address (any case) moves it, and the contact follows at once.
    const newHolder = await signIn({ sub: 'uid-frank-new', email: 'FRANK@example.com' });
    const frankSocket = await connect(frank);
    const moved = await send(alice, frankAtAlice.id as string, 'to the new holder');
    expect(await recipientUserOf(moved)).toBe(newHolder.id);
    await fannedOut(aliceSocket, moved);
    expect(await frankSocket.pending('message.created')).toEqual([]);
    const holders: Array<{ id: string }> = await dataSource.query(`SELECT id FROM users WHERE verified_email = 'frank@example.com'`);
    expect(holders).toEqual([{ id: newHolder.id }]);

    // The holder proving another address lets go of this one: the contact reaches nobody.
    await signIn({ sub: 'uid-frank-new', email: 'frank.elsewhere@example.com' });
    expect(await recipientUserOf(await send(alice, frankAtAlice.id as string, 'to nobody'))).toBeNull();

    // Thirty first logins of different subjects claim one verified address at once.
    const logins = await Promise.all(
      Array.from({ length: 30 }, async (_, i) =>
        request(url)
          .post('/v1/auth/login')
          .send({ firebase_token: await idp.token({ sub: `uid-race-${i}`, name: `Racer ${i}`, email: 'race@example.com' }) }),
      ),
    );
    expect(logins.map((res) => res.status)).toEqual(Array(30).fill(200));
    const racers = new Set(logins.map((res) => res.body.user.id as string));
    const winners: Array<{ id: string }> = await dataSource.query(`SELECT id FROM users WHERE verified_email = 'race@example.com'`);
    expect(winners).toHaveLength(1);
    expect(racers.has(winners[0].id)).toBe(true);
    const raceAtAlice = await addContact(alice, 'Racer', 'race@example.com');
    expect(await recipientUserOf(await send(alice, raceAtAlice.id as string, 'who won?'))).toBe(winners[0].id);
  });

  it('answers a contact for a registered address exactly like one for an unregistered address, with no user id, until the person adds the owner back', async () => {
    const grace = await newUser('uid-grace', 'grace@example.com');
    const heidi = await newUser('uid-heidi', 'heidi@example.com');
    const heidiSocket = await connect(heidi);
    const graceSocket = await connect(grace);

    const registered = await addContact(heidi, 'Probe', 'grace@example.com');
    const unregistered = await addContact(heidi, 'Probe', 'nobody@example.com');
    const shape = ({ id: _id, email: _email, created_at: _created, ...rest }: Record<string, unknown>) => rest;
    expect(shape(registered)).toEqual(shape(unregistered));
    expect(Object.keys(registered).sort()).toEqual(Object.keys(unregistered).sort());
    expect(registered).toMatchObject({ connected: false });
    expect(userIdsIn(registered)).toEqual([]);
    const list = await request(url).get('/v1/contacts').set(heidi.auth).expect(200);
    expect(userIdsIn(list.body)).toEqual([]);
    const listed = list.body.contacts as Array<Record<string, unknown>>;
    expect(shape(listed.find((c) => c.id === registered.id)!)).toEqual(shape(listed.find((c) => c.id === unregistered.id)!));

    // Typing and delivery receipts do not tell the two apart either.
    for (const [i, contact] of [registered, unregistered].entries()) {
      heidiSocket.send({ type: 'typing', id: `t-${i}`, data: { recipient_id: contact.id } });
      expect((await heidiSocket.next('ack', (f) => f.id === `t-${i}`)).data).toEqual({ recipients: 0 });
    }
    const toGrace = await send(heidi, registered.id as string, 'are you there?');
    await send(heidi, unregistered.id as string, 'are you there?');
    // Grace receives it (Heidi knows her address), but Heidi learns nothing back.
    const inbound = await graceSocket.next('message.created', (f) => f.data.id === toGrace);
    expect(inbound.data).toMatchObject({ direction: 'inbound', sender_contact_id: null });
    expect(await heidiSocket.pending('message.delivered', 500)).toEqual([]);
    expect(await graceSocket.pending('typing', 0)).toEqual([]);

    // Grace adds Heidi back: now both see the indicator, and only for each other.
    const heidiAtGrace = await addContact(grace, 'Heidi', 'heidi@example.com');
    expect(heidiAtGrace).toMatchObject({ connected: true });
    const again = await request(url)
      .get(`/v1/contacts/${registered.id as string}`)
      .set(heidi.auth)
      .expect(200);
    expect(again.body).toMatchObject({ connected: true });
    expect(userIdsIn(again.body)).toEqual([]);
    const stillUnknown = await request(url)
      .get(`/v1/contacts/${unregistered.id as string}`)
      .set(heidi.auth)
      .expect(200);
    expect(stillUnknown.body).toMatchObject({ connected: false });
  });

  it('tells connected users about each other by their own contact ids, never by the other user’s id', async () => {
    const ivan = await newUser('uid-ivan', 'ivan@example.com');
    const judy = await newUser('uid-judy', 'judy@example.com');
    const judyAtIvan = (await addContact(ivan, 'Judy', 'judy@example.com')).id as string;
    const ivanAtJudy = (await addContact(judy, 'Ivan', 'ivan@example.com')).id as string;
    const ivanSocket = await connect(ivan);
    const judySocket = await connect(judy);

    // Presence: Judy came online after Ivan, and a new session of Ivan lists Judy.
    expect((await ivanSocket.next('presence.updated', (f) => f.data.contact_id === judyAtIvan)).data).toMatchObject({
      status: 'online',
    });
    const ivanAgain = await connect(ivan);
    expect(ivanAgain.seen.find((f) => f.type === 'ready')!.data.presence).toEqual([{ contact_id: judyAtIvan, status: 'online' }]);

    // A message, its delivery and read receipts, and typing.
    ivanSocket.send({ type: 'message.send', id: 'm-1', data: { recipient_id: judyAtIvan, content: 'hi Judy' } });
    const { data: sent } = await ivanSocket.next('ack', (f) => f.id === 'm-1');
    const inbound = await judySocket.next('message.created', (f) => f.data.id === sent.id);
    expect(inbound.data).toMatchObject({ direction: 'inbound', sender_contact_id: ivanAtJudy, content: 'hi Judy' });
    expect(inbound.data).not.toHaveProperty('sender_id');
    expect((await ivanSocket.next('message.delivered')).data).toEqual({
      message_id: sent.id,
      contact_id: judyAtIvan,
      delivered_at: expect.any(String),
    });
    judySocket.send({ type: 'message.read', id: 'r-1', data: { message_ids: [sent.id] } });
    expect((await ivanSocket.next('message.read')).data).toEqual({
      message_id: sent.id,
      contact_id: judyAtIvan,
      read_at: expect.any(String),
    });
    judySocket.send({ type: 'typing', id: 't-1', data: { recipient_id: ivanAtJudy } });
    expect((await judySocket.next('ack', (f) => f.id === 't-1')).data).toEqual({ recipients: 1 });
    expect((await ivanSocket.next('typing')).data).toEqual({ contact_id: judyAtIvan, recipient_kind: 'contact', state: 'started' });

    // History and a replay carry the viewer's contact id too.
    const reply = await send(judy, ivanAtJudy, 'hi Ivan');
    await waitFor(async () => (await history(ivan, judyAtIvan)).some((m) => m.id === reply), { what: 'the reply in the history' });
    const thread = await history(ivan, judyAtIvan);
    expect(thread.find((m) => m.id === reply)).toMatchObject({ direction: 'inbound', sender_contact_id: judyAtIvan });
    expect(thread.find((m) => m.id === sent.id)).toMatchObject({ direction: 'outbound', sender_contact_id: null });
    ivanAgain.send({ type: 'sync', data: { since: new Date(Date.now() - 60_000).toISOString() } });
    expect((await ivanAgain.next('message.created', (f) => f.data.id === reply && f.data.replayed === true)).data).toMatchObject({
      sender_contact_id: judyAtIvan,
    });
    judySocket.socket.close();
    await ivanSocket.next('presence.updated', (f) => f.data.contact_id === judyAtIvan && f.data.status === 'offline');

    // Nothing either received names the other's user id.
    expect(userIdsIn([...ivanSocket.seen, ...ivanAgain.seen, thread]).filter((id) => id !== ivan.id)).toEqual([]);
    expect(userIdsIn([...judySocket.seen, await history(judy, ivanAtJudy)]).filter((id) => id !== judy.id)).toEqual([]);
  });
});
