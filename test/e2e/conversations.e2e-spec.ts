import request from 'supertest';
import { GatewayClient } from '../support/gateway-client';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { LoggedInUser, login, raiseToEnterprise } from '../support/users';
import { waitFor } from '../support/wait-for';

type Item = Record<string, unknown>;

/**
 * The chat API the consumer app is built on (issue 23): receipts that persist,
 * group conversations for every member, contacts added before the friend
 * joins, the inbox, and the soul record after its deletion. Each test uses its
 * own people (fresh addresses), so tests do not see each other's messages.
 */
describe('conversations: receipts, groups, pending contacts, inbox', () => {
  let env: TestEnvironment;
  let idp: TestIdentityProvider;
  let url: string;
  const sockets: GatewayClient[] = [];
  let run = 0;

  /** A user signed in with a verified address `<name>-<n>@example.com`, on the enterprise tier. */
  async function person(name: string, email = address(name)): Promise<LoggedInUser & { email: string }> {
    const user = await login(url, idp, { sub: `uid-${email}`, name, email, emailVerified: true });
    await raiseToEnterprise(url, user);
    return { ...user, email };
  }

  function address(name: string): string {
    return `${name.toLowerCase()}-${run}@example.com`;
  }

  async function addContact(owner: LoggedInUser, name: string, email: string): Promise<string> {
    return (await request(url).post('/v1/contacts').set(owner.auth).send({ name, email }).expect(201)).body.id;
  }

  async function send(sender: LoggedInUser, recipientId: string, content: string): Promise<{ id: string; status: string }> {
    return (await request(url).post('/v1/messages').set(sender.auth).send({ recipient_id: recipientId, content }).expect(201)).body;
  }

  async function history(user: LoggedInUser, withId: string): Promise<Item[]> {
    return (await request(url).get(`/v1/messages?with=${withId}`).set(user.auth).expect(200)).body.messages;
  }

  async function inbox(user: LoggedInUser, query = ''): Promise<{ conversations: Item[]; next_cursor: string | null }> {
    return (await request(url).get(`/v1/conversations${query}`).set(user.auth).expect(200)).body;
  }

  async function connect(user: LoggedInUser): Promise<GatewayClient> {
    const client = await GatewayClient.open(url, user.token);
    sockets.push(client);
    return client;
  }

  /** Two people who added each other (so receipts flow between them), with their contacts for each other. */
  async function friends(a: string, b: string) {
    const first = await person(a);
    const second = await person(b);
    const secondAtFirst = await addContact(first, b, second.email);
    const firstAtSecond = await addContact(second, a, first.email);
    return { first, second, secondAtFirst, firstAtSecond };
  }

  beforeAll(async () => {
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create(idp.env);
    url = (await env.startApi()).url;
    // message.created's durable copy and export builds run in the worker.
    await env.startWorker();
  });

  beforeEach(() => {
    run += 1;
  });

  afterEach(async () => {
    await GatewayClient.terminateAll(sockets);
  });

  afterAll(async () => {
    await env?.close();
    await idp?.close();
  });

  describe('receipts persist', () => {
    it('shows delivered and then read in both histories after a reload, with their times', async () => {
      const { first: alice, second: bob, secondAtFirst: bobAtAlice, firstAtSecond: aliceAtBob } = await friends('Alice', 'Bob');
      const sent = await send(alice, bobAtAlice, 'are you there?');
      expect(sent.status).toBe('sent');
      expect((await history(alice, bobAtAlice))[0]).toMatchObject({
        id: sent.id,
        direction: 'outbound',
        status: 'sent',
        delivered_at: null,
        read_at: null,
        recipient_kind: 'contact',
        group_id: null,
        waiting_recipients: 0,
      });

      // Bob's socket gets it: delivered.
      const bobSocket = await connect(bob);
      bobSocket.send({ type: 'sync', id: 's-1', data: { since: new Date(0).toISOString() } });
      const frame = await bobSocket.next('message.created', (f) => f.data.id === sent.id);
      expect(frame.data).toMatchObject({ direction: 'inbound', sender_contact_id: aliceAtBob, recipient_kind: 'contact' });
      await waitFor(async () => (await history(alice, bobAtAlice))[0].status === 'delivered', { what: 'delivered in the history' });
      const delivered = (await history(alice, bobAtAlice))[0];
      expect(delivered.delivered_at).toEqual(expect.any(String));
      expect(delivered.read_at).toBeNull();
      expect((await history(bob, aliceAtBob))[0]).toMatchObject({ id: sent.id, direction: 'inbound', status: 'delivered' });

      bobSocket.send({ type: 'message.read', id: 'r-1', data: { message_ids: [sent.id] } });
      expect((await bobSocket.next('ack', (f) => f.id === 'r-1')).data).toEqual({ read: [sent.id] });

      const [outbound] = await history(alice, bobAtAlice);
      expect(outbound).toMatchObject({ id: sent.id, status: 'read', read_at: expect.any(String), delivered_at: expect.any(String) });
      const [inbound] = await history(bob, aliceAtBob);
      expect(inbound).toMatchObject({ id: sent.id, status: 'read', read_at: outbound.read_at, delivered_at: outbound.delivered_at });
    });

    it('reads a group message as read only once every member on the service read it', async () => {
      const alice = await person('Alice');
      const bob = await person('Bob');
      const carol = await person('Carol');
      const bobAtAlice = await addContact(alice, 'Bob', bob.email);
      const carolAtAlice = await addContact(alice, 'Carol', carol.email);
      await addContact(bob, 'Alice', alice.email);
      await addContact(carol, 'Alice', alice.email);
      const group = (
        await request(url)
          .post('/v1/groups')
          .set(alice.auth)
          .send({ name: 'Walk', member_ids: [bobAtAlice, carolAtAlice] })
          .expect(201)
      ).body;
      const sent = await send(alice, group.id, 'Sunday?');
      const bobSocket = await connect(bob);
      const carolSocket = await connect(carol);
      bobSocket.send({ type: 'message.read', id: 'r-b', data: { message_ids: [sent.id] } });
      await bobSocket.next('ack', (f) => f.id === 'r-b');
      // Carol has not even received it yet: the least advanced state is hers; read_at is Bob's, the latest.
      expect((await history(alice, group.id))[0]).toMatchObject({ status: 'sent', read_at: expect.any(String) });

      carolSocket.send({ type: 'message.read', id: 'r-c', data: { message_ids: [sent.id] } });
      await carolSocket.next('ack', (f) => f.id === 'r-c');
      expect((await history(alice, group.id))[0]).toMatchObject({ status: 'read', group_id: group.id, recipient_kind: 'group' });
    });
  });

  describe('group conversations for every member', () => {
    it('labels group messages with the group live and in history, and keeps them out of the one-to-one thread', async () => {
      const { first: alice, second: bob, secondAtFirst: bobAtAlice, firstAtSecond: aliceAtBob } = await friends('Alice', 'Bob');
      const group = (
        await request(url)
          .post('/v1/groups')
          .set(alice.auth)
          .send({ name: 'Book club', member_ids: [bobAtAlice] })
          .expect(201)
      ).body;
      const aliceOtherTab = await connect(alice);
      const bobSocket = await connect(bob);

      const direct = await send(alice, bobAtAlice, 'just for you');
      const toGroup = await send(alice, group.id, 'chapter 3 tonight');

      const inbound = await bobSocket.next('message.created', (f) => f.data.id === toGroup.id);
      expect(inbound.data).toMatchObject({
        direction: 'inbound',
        recipient_kind: 'group',
        group_id: group.id,
        group_name: 'Book club',
        sender_contact_id: aliceAtBob,
        recipient_id: bob.id,
      });
      const outbound = await aliceOtherTab.next('message.created', (f) => f.data.id === toGroup.id);
      expect(outbound.data).toMatchObject({ direction: 'outbound', recipient_id: group.id, group_id: group.id, group_name: 'Book club' });
      const directFrame = await bobSocket.next('message.created', (f) => f.data.id === direct.id);
      expect(directFrame.data).not.toHaveProperty('group_id');

      // The member's group thread and one-to-one thread.
      const bobGroup = await history(bob, group.id);
      expect(bobGroup).toEqual([
        expect.objectContaining({ id: toGroup.id, direction: 'inbound', group_id: group.id, sender_contact_id: aliceAtBob }),
      ]);
      expect((await history(bob, aliceAtBob)).map((m) => m.id)).toEqual([direct.id]);
      // The owner's.
      expect((await history(alice, group.id)).map((m) => m.id)).toEqual([toGroup.id]);
      expect((await history(alice, bobAtAlice)).map((m) => m.id)).toEqual([direct.id]);

      // A reconnecting member's sync carries the group too.
      bobSocket.send({ type: 'sync', id: 's-1', data: { since: new Date(0).toISOString() } });
      const replayed = await bobSocket.next('message.created', (f) => f.data.id === toGroup.id && f.data.replayed === true);
      expect(replayed.data).toMatchObject({ group_id: group.id, group_name: 'Book club', recipient_kind: 'group' });
    });

    it('tells members when the owner renames the group or changes its members; strangers cannot read it', async () => {
      const { first: alice, second: bob, secondAtFirst: bobAtAlice } = await friends('Alice', 'Bob');
      const carolAtAlice = await addContact(alice, 'Carol', address('Carol'));
      const dave = await person('Dave');
      const group = (
        await request(url)
          .post('/v1/groups')
          .set(alice.auth)
          .send({ name: 'Trip', member_ids: [bobAtAlice] })
          .expect(201)
      ).body;
      const bobSocket = await connect(bob);
      const daveSocket = await connect(dave);

      await request(url).patch(`/v1/groups/${group.id}`).set(alice.auth).send({ name: 'Trip to Rome' }).expect(200);
      expect((await bobSocket.next('group.updated')).data).toEqual({ group_id: group.id, name: 'Trip to Rome', member_count: 1 });

      await request(url)
        .patch(`/v1/groups/${group.id}`)
        .set(alice.auth)
        .send({ member_ids: [bobAtAlice, carolAtAlice] })
        .expect(200);
      expect((await bobSocket.next('group.updated')).data).toEqual({ group_id: group.id, name: 'Trip to Rome', member_count: 2 });

      // A removed member is told as well.
      await request(url)
        .patch(`/v1/groups/${group.id}`)
        .set(alice.auth)
        .send({ member_ids: [carolAtAlice] })
        .expect(200);
      expect((await bobSocket.next('group.updated')).data).toEqual({ group_id: group.id, name: 'Trip to Rome', member_count: 1 });
      await daveSocket.none('group.updated');

      // Bob is no longer a member and received nothing from it; Dave never was.
      const gone = await request(url).get(`/v1/messages?with=${group.id}`).set(bob.auth).expect(404);
      expect(gone.body.error.code).toBe('NOT_FOUND');
      await request(url).get(`/v1/messages?with=${group.id}`).set(dave.auth).expect(404);
    });

    it('refuses a member sending to the owner’s group: only its owner writes to it', async () => {
      const { first: alice, second: bob, secondAtFirst: bobAtAlice } = await friends('Alice', 'Bob');
      const group = (
        await request(url)
          .post('/v1/groups')
          .set(alice.auth)
          .send({ name: 'News', member_ids: [bobAtAlice] })
          .expect(201)
      ).body;
      const res = await request(url).post('/v1/messages').set(bob.auth).send({ recipient_id: group.id, content: 'hi all' }).expect(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    });
  });

  describe('contacts added before the friend joins', () => {
    it('marks what was sent as waiting, then gives it to the friend who signs up with that verified address', async () => {
      const alice = await person('Alice');
      const carolEmail = address('Carol');
      const carolAtAlice = await addContact(alice, 'Carol', carolEmail);

      const sent = await send(alice, carolAtAlice, 'join me here!');
      expect(sent.status).toBe('waiting');
      expect((await history(alice, carolAtAlice))[0]).toMatchObject({ id: sent.id, status: 'waiting', waiting_recipients: 1 });

      // An impostor with the address unverified gets nothing.
      const impostor = await login(url, idp, { sub: `uid-impostor-${run}`, email: carolEmail, emailVerified: false });
      const impostorSocket = await connect(impostor);
      impostorSocket.send({ type: 'sync', id: 's-0', data: { since: new Date(0).toISOString() } });
      expect((await impostorSocket.next('sync.complete')).data).toMatchObject({ count: 0 });
      expect((await history(alice, carolAtAlice))[0].status).toBe('waiting');

      const carol = await person('Carol', carolEmail);
      expect((await history(alice, carolAtAlice))[0]).toMatchObject({ id: sent.id, status: 'sent', waiting_recipients: 0 });
      const carolSocket = await connect(carol);
      carolSocket.send({ type: 'sync', id: 's-1', data: { since: new Date(0).toISOString() } });
      const replayed = await carolSocket.next('message.created', (f) => f.data.id === sent.id);
      expect(replayed.data).toMatchObject({ content: 'join me here!', direction: 'inbound', sender_contact_id: null, replayed: true });
      expect((await carolSocket.next('sync.complete')).data).toMatchObject({ count: 1 });

      // Once Carol adds Alice back, the message is in their thread and in her inbox.
      const aliceAtCarol = await addContact(carol, 'Alice', alice.email);
      expect((await history(carol, aliceAtCarol)).map((m) => m.id)).toEqual([sent.id]);
      const { conversations } = await inbox(carol);
      expect(conversations).toContainEqual(
        expect.objectContaining({ kind: 'contact', id: aliceAtCarol, last_message: expect.objectContaining({ id: sent.id }) }),
      );
      // New messages to Carol are sent, not waiting.
      expect((await send(alice, carolAtAlice, 'welcome!')).status).toBe('sent');
    });

    it('hands what waited to the person once the sender corrects the contact’s address to theirs', async () => {
      const alice = await person('Alice');
      const bob = await person('Bob');
      const bobAtAlice = await addContact(alice, 'Bob', `typo-${bob.email}`);
      const sent = await send(alice, bobAtAlice, 'did you get this?');
      expect(sent.status).toBe('waiting');

      await request(url).patch(`/v1/contacts/${bobAtAlice}`).set(alice.auth).send({ email: bob.email }).expect(200);
      expect((await history(alice, bobAtAlice))[0]).toMatchObject({ id: sent.id, status: 'sent' });
      const bobSocket = await connect(bob);
      bobSocket.send({ type: 'sync', id: 's-1', data: { since: new Date(0).toISOString() } });
      expect((await bobSocket.next('message.created', (f) => f.data.id === sent.id)).data).toMatchObject({ content: 'did you get this?' });
    });

    it('keeps a group message waiting for the members not on the service yet', async () => {
      const { first: alice, secondAtFirst: bobAtAlice } = await friends('Alice', 'Bob');
      const carolAtAlice = await addContact(alice, 'Carol', address('Carol'));
      const group = (
        await request(url)
          .post('/v1/groups')
          .set(alice.auth)
          .send({ name: 'Pending', member_ids: [bobAtAlice, carolAtAlice] })
          .expect(201)
      ).body;
      const sent = await send(alice, group.id, 'hello both');
      expect(sent.status).toBe('sent');
      expect((await history(alice, group.id))[0]).toMatchObject({ status: 'sent', waiting_recipients: 1 });
    });
  });

  describe('last interaction', () => {
    it('counts messages received as well as sent: the receiver’s contact for the sender moves to the message’s time', async () => {
      const { first: alice, second: bob, secondAtFirst: bobAtAlice, firstAtSecond: aliceAtBob } = await friends('Lin', 'Mo');
      const before = (await request(url).get(`/v1/contacts/${aliceAtBob}`).set(bob.auth).expect(200)).body;
      expect(before.last_interaction).toBeNull();
      const sent = await send(alice, bobAtAlice, 'lunch?');
      const created = (await history(alice, bobAtAlice))[0].created_at;
      expect(created).toEqual(expect.any(String));
      await waitFor(
        async () => (await request(url).get(`/v1/contacts/${aliceAtBob}`).set(bob.auth).expect(200)).body.last_interaction === created,
        { what: 'Bob’s contact for Alice to note the message he received' },
      );
      expect(sent.id).toMatch(/^msg_/);
    });
  });

  describe('GET /v1/conversations', () => {
    it('lists contacts and groups by last message with unread counts, groups of others included, paged by cursor', async () => {
      const { first: alice, second: bob, secondAtFirst: bobAtAlice, firstAtSecond: aliceAtBob } = await friends('Alice', 'Bob');
      const zoeAtBob = await addContact(bob, 'Zoe', address('Zoe'));
      const amyAtBob = await addContact(bob, 'amy', address('Amy'));
      const group = (
        await request(url)
          .post('/v1/groups')
          .set(alice.auth)
          .send({ name: 'Choir', member_ids: [bobAtAlice] })
          .expect(201)
      ).body;
      const bobsGroup = (await request(url).post('/v1/groups').set(bob.auth).send({ name: 'Empty', member_ids: [] }).expect(201)).body;

      const first = await send(alice, bobAtAlice, 'one');
      await send(alice, bobAtAlice, 'two');
      const inGroup = await send(alice, group.id, 'sing');
      const reply = await send(bob, aliceAtBob, 'hi Alice');

      const all = await inbox(bob);
      expect(all.next_cursor).toBeNull();
      expect(all.conversations).toEqual([
        {
          kind: 'contact',
          id: aliceAtBob,
          name: 'Alice',
          role: null,
          last_message: { id: reply.id, content: 'hi Alice', type: 'text', created_at: expect.any(String), direction: 'outbound' },
          unread: 2,
        },
        {
          kind: 'group',
          id: group.id,
          name: 'Choir',
          role: 'member',
          last_message: { id: inGroup.id, content: 'sing', type: 'text', created_at: expect.any(String), direction: 'inbound' },
          unread: 1,
        },
        { kind: 'contact', id: amyAtBob, name: 'amy', role: null, last_message: null, unread: 0 },
        { kind: 'group', id: bobsGroup.id, name: 'Empty', role: 'owner', last_message: null, unread: 0 },
        { kind: 'contact', id: zoeAtBob, name: 'Zoe', role: null, last_message: null, unread: 0 },
      ]);

      // Reading lowers the count.
      const bobSocket = await connect(bob);
      bobSocket.send({ type: 'message.read', id: 'r-1', data: { message_ids: [first.id] } });
      await bobSocket.next('ack', (f) => f.id === 'r-1');
      expect((await inbox(bob)).conversations[0]).toMatchObject({ id: aliceAtBob, unread: 1 });

      // The owner's view: the group is theirs.
      expect((await inbox(alice)).conversations).toEqual([
        expect.objectContaining({
          kind: 'contact',
          id: bobAtAlice,
          unread: 1,
          last_message: expect.objectContaining({ id: reply.id, direction: 'inbound' }),
        }),
        expect.objectContaining({ kind: 'group', id: group.id, role: 'owner', unread: 0 }),
      ]);

      // Pages of two, then one: the same order, nothing repeated.
      const pages: Item[] = [];
      let cursor: string | null = null;
      let calls = 0;
      do {
        const page: { conversations: Item[]; next_cursor: string | null } = await inbox(
          bob,
          `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        pages.push(...page.conversations);
        cursor = page.next_cursor;
        calls += 1;
      } while (cursor !== null && calls < 10);
      expect(calls).toBe(3);
      expect(pages.map((c) => c.id)).toEqual([aliceAtBob, group.id, amyAtBob, bobsGroup.id, zoeAtBob]);
    });

    it('refuses a malformed cursor and an out-of-range limit with 400', async () => {
      const alice = await person('Alice');
      const bad = await request(url).get('/v1/conversations?cursor=not-a-cursor').set(alice.auth).expect(400);
      expect(bad.body.error.code).toBe('BAD_REQUEST');
      await request(url).get('/v1/conversations?limit=0').set(alice.auth).expect(400);
      await request(url).get('/v1/conversations').expect(401);
    });
  });

  describe('after deleting the soul record', () => {
    it('still exports contacts and messages, and lets the user create a new record', async () => {
      const { first: alice, secondAtFirst: bobAtAlice } = await friends('Alice', 'Bob');
      const sent = await send(alice, bobAtAlice, 'kept after deletion');
      const before = await request(url).post('/v1/soul/export').set(alice.auth).set('Idempotency-Key', 'export-1').send({}).expect(202);

      await request(url).delete('/v1/soul').set(alice.auth).expect(200);

      // The same key asks again: a new export, not the deleted one.
      const after = await request(url).post('/v1/soul/export').set(alice.auth).set('Idempotency-Key', 'export-1').send({}).expect(202);
      expect(after.body.id).not.toBe(before.body.id);
      const ready = await waitFor(
        async () => {
          const res = await request(url).get(`/v1/exports/${after.body.id}`).set(alice.auth);
          return res.status === 200 ? res : undefined;
        },
        { intervalMs: 200, timeoutMs: 20_000, what: 'the export' },
      );
      const document = JSON.parse(ready.text);
      expect(document.soul).toBeNull();
      expect(document.contacts).toContainEqual(expect.objectContaining({ id: bobAtAlice, name: 'Bob' }));
      expect(document.messages.sent).toContainEqual(expect.objectContaining({ id: sent.id, content: 'kept after deletion' }));

      const created = await request(url).post('/v1/soul').set(alice.auth).expect(201);
      expect(created.body).toMatchObject({ user_id: alice.id, values: [], traits: { communication_style: 'diplomatic', humour: 'dry' } });
      expect((await request(url).get('/v1/soul').set(alice.auth).expect(200)).body.id).toBe(created.body.id);
      expect((await request(url).get('/v1/me').set(alice.auth).expect(200)).body.soul_id).toBe(created.body.id);
      await request(url)
        .patch('/v1/soul')
        .set(alice.auth)
        .send({ traits: { humour: 'witty' } })
        .expect(200);
      const again = await request(url).post('/v1/soul').set(alice.auth).expect(409);
      expect(again.body.error.code).toBe('CONFLICT');
    });
  });
});
