import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { newId } from '../../src/common/ids';
import type { ContactDto } from '../../src/modules/contacts/dto/contact.dto';
import type { GroupDto } from '../../src/modules/contacts/dto/group.dto';
import { ContactsPersonalData, GroupsPersonalData } from '../../src/modules/contacts/contacts.personal-data';
import { ContactsService } from '../../src/modules/contacts/contacts.service';
import { MessagesPersonalData } from '../../src/modules/messages/messages.personal-data';
import { MessagesService } from '../../src/modules/messages/messages.service';
import { factories } from '../support/factories';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { LoggedInUser, login, raiseToEnterprise } from '../support/users';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('contacts, groups and messages (user API)', () => {
  let env: TestEnvironment;
  let idp: TestIdentityProvider;
  let url: string;
  let dataSource: DataSource;
  let app: Awaited<ReturnType<TestEnvironment['startApi']>>['app'];
  let users = 0;
  /**
   * Users shared by tests that do not count a user's rows. Logins are limited to
   * 60 a minute per address, so the file logs in only a dozen users.
   */
  let alice: LoggedInUser;
  let bob: LoggedInUser;
  let carol: LoggedInUser;
  let dave: LoggedInUser;

  /** A fresh user on the enterprise tier, so that many calls in one test stay under the rate limit. */
  async function newUser(email?: string, name = 'Test User'): Promise<LoggedInUser> {
    users += 1;
    const user = await login(url, idp, { sub: `uid-cm-${users}`, name, email: email ?? `user${users}@example.com` });
    await raiseToEnterprise(url, user);
    return user;
  }

  async function addContact(user: LoggedInUser, body: Record<string, unknown>): Promise<ContactDto> {
    const res = await request(url).post('/v1/contacts').set(user.auth).send(body).expect(201);
    return res.body;
  }

  /** The service user a contact reaches: internal, the API never shows it. */
  async function linkedUserOf(user: LoggedInUser, contactId: string): Promise<string | null> {
    return (await app.get(ContactsService).findRecipient(user.id, contactId))!.linkedUserId;
  }

  async function addGroup(user: LoggedInUser, name: string, memberIds: string[]): Promise<GroupDto> {
    const res = await request(url).post('/v1/groups').set(user.auth).send({ name, member_ids: memberIds }).expect(201);
    return res.body;
  }

  function send(user: LoggedInUser, recipientId: string, content = 'hello', extra: Record<string, unknown> = {}): request.Test {
    return request(url)
      .post('/v1/messages')
      .set(user.auth)
      .send({ recipient_id: recipientId, content, ...extra });
  }

  function expectBadRequest(res: request.Response, field: string): void {
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: 'BAD_REQUEST', message: expect.stringContaining(field), status: 400 } });
  }

  function expectNotFound(res: request.Response): void {
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String), status: 404 } });
  }

  beforeAll(async () => {
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create(idp.env);
    const api = await env.startApi();
    url = api.url;
    app = api.app;
    dataSource = app.get(getDataSourceToken());
    alice = await newUser('alice.cm@example.com', 'Alice');
    bob = await newUser('bob.cm@example.com', 'Bob');
    carol = await newUser('carol.cm@example.com', 'Carol');
    dave = await newUser('dave.cm@example.com', 'Dave');
  });
  afterAll(async () => {
    await env.close();
    await idp.close();
  });

  describe('contacts', () => {
    it('creates a contact and reads it back with the spec fields plus connected and created_at', async () => {
      const user = alice;
      const created = await addContact(user, { name: '  Ada Lovelace ', email: 'ada.contact@example.com' });
      expect(created).toEqual({
        id: expect.stringMatching(/^con_[0-9A-Za-z]{22}$/),
        name: 'Ada Lovelace',
        email: 'ada.contact@example.com',
        relationship_score: 0,
        last_interaction: null,
        connected: false,
        created_at: expect.stringMatching(ISO),
      });
      await request(url).get(`/v1/contacts/${created.id}`).set(user.auth).expect(200, created);
      const withoutEmail = await addContact(user, { name: 'No Email' });
      expect(withoutEmail).toMatchObject({ email: null, connected: false });
    });

    describe('refuses invalid input with 400 BAD_REQUEST naming the field', () => {
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['a missing name', { email: 'x@example.com' }, 'name'],
        ['an empty name', { name: '' }, 'name'],
        ['a name of only spaces', { name: '   ' }, 'name'],
        ['a name of 201 characters', { name: 'x'.repeat(201) }, 'name'],
        ['a name that is not a string', { name: 42 }, 'name'],
        ['a malformed email', { name: 'Bad Email', email: 'not-an-email' }, 'email'],
        ['an unknown field', { name: 'Extra', nickname: 'x' }, 'nickname'],
      ];
      it.each(cases)('%s', async (_case, body, field) => {
        expectBadRequest(await request(url).post('/v1/contacts').set(alice.auth).send(body), field);
      });

      it('accepts a name of exactly 200 characters', async () => {
        expect((await addContact(alice, { name: 'y'.repeat(200) })).name).toHaveLength(200);
      });
    });

    it('refuses a second contact with the same email (in any case) with 400 BAD_REQUEST', async () => {
      await addContact(alice, { name: 'First', email: 'twice@example.com' });
      expectBadRequest(
        await request(url).post('/v1/contacts').set(alice.auth).send({ name: 'Second', email: 'TWICE@example.com' }),
        'email',
      );
      // Another user may have a contact with that email.
      await addContact(bob, { name: 'Elsewhere', email: 'twice@example.com' });
    });

    it('links a contact to the service user who verified its email, but never to the owner, and shows neither', async () => {
      const linked = await addContact(carol, { name: 'Bob', email: 'Bob.CM@example.com' });
      expect(await linkedUserOf(carol, linked.id)).toBe(bob.id);
      expect(linked).toMatchObject({ connected: false });
      expect(JSON.stringify(linked)).not.toContain('usr_');
      const self = await addContact(carol, { name: 'Me', email: 'carol.cm@example.com' });
      expect(await linkedUserOf(carol, self.id)).toBeNull();
    });

    it('PATCH renames, relinks on a new email and unlinks on email null', async () => {
      const [owner, first, second] = [alice, bob, carol];
      const contact = await addContact(owner, { name: 'Somebody', email: 'bob.cm@example.com' });
      expect(await linkedUserOf(owner, contact.id)).toBe(first.id);

      const renamed = await request(url).patch(`/v1/contacts/${contact.id}`).set(owner.auth).send({ name: 'Renamed' }).expect(200);
      expect(renamed.body).toMatchObject({ id: contact.id, name: 'Renamed', email: 'bob.cm@example.com', connected: false });
      expect(await linkedUserOf(owner, contact.id)).toBe(first.id);

      const relinked = await request(url)
        .patch(`/v1/contacts/${contact.id}`)
        .set(owner.auth)
        .send({ email: 'carol.cm@example.com' })
        .expect(200);
      expect(relinked.body).toMatchObject({ name: 'Renamed', email: 'carol.cm@example.com' });
      expect(await linkedUserOf(owner, contact.id)).toBe(second.id);

      const unlinked = await request(url).patch(`/v1/contacts/${contact.id}`).set(owner.auth).send({ email: null }).expect(200);
      expect(unlinked.body).toMatchObject({ email: null, connected: false });
      expect(await linkedUserOf(owner, contact.id)).toBeNull();

      expectBadRequest(await request(url).patch(`/v1/contacts/${contact.id}`).set(owner.auth).send({ name: '' }), 'name');
      expectBadRequest(await request(url).patch(`/v1/contacts/${contact.id}`).set(owner.auth).send({ name: null }), 'name');
      expectBadRequest(await request(url).patch(`/v1/contacts/${contact.id}`).set(owner.auth).send({ email: 'nope' }), 'email');
      await addContact(owner, { name: 'Taken', email: 'taken@example.com' });
      expectBadRequest(
        await request(url).patch(`/v1/contacts/${contact.id}`).set(owner.auth).send({ email: 'taken@example.com' }),
        'email',
      );
    });

    it('DELETE answers 204, after which the contact is 404 and has left its groups', async () => {
      const user = alice;
      const [gone, stays] = [await addContact(user, { name: 'Gone' }), await addContact(user, { name: 'Stays' })];
      const group = await addGroup(user, 'Pair', [gone.id, stays.id]);
      await request(url).delete(`/v1/contacts/${gone.id}`).set(user.auth).expect(204, '');
      expectNotFound(await request(url).get(`/v1/contacts/${gone.id}`).set(user.auth));
      expectNotFound(await request(url).delete(`/v1/contacts/${gone.id}`).set(user.auth));
      const after = await request(url).get(`/v1/groups/${group.id}`).set(user.auth).expect(200);
      expect(after.body.member_ids).toEqual([stays.id]);
    });

    it('answers 404 NOT_FOUND for an unknown or malformed contact id', async () => {
      const user = alice;
      expectNotFound(
        await request(url)
          .get(`/v1/contacts/${newId('con')}`)
          .set(user.auth),
      );
      expectNotFound(await request(url).get('/v1/contacts/not-an-id').set(user.auth));
      expectNotFound(
        await request(url)
          .patch(`/v1/contacts/${newId('con')}`)
          .set(user.auth)
          .send({ name: 'x' }),
      );
    });

    describe('list', () => {
      let user: LoggedInUser;
      beforeAll(async () => {
        user = await newUser();
        for (let i = 0; i < 25; i += 1) await addContact(user, { name: `Contact ${String(i).padStart(2, '0')}` });
      });

      it('answers the wrapper with default limit 20 and offset 0, and total counting all contacts', async () => {
        const res = await request(url).get('/v1/contacts').set(user.auth).expect(200);
        expect(res.body).toEqual({ contacts: expect.any(Array), total: 25, limit: 20, offset: 0 });
        expect(res.body.contacts).toHaveLength(20);
        expect(res.body.contacts[0]).toEqual({
          id: expect.stringMatching(/^con_/),
          name: 'Contact 00',
          email: null,
          relationship_score: 0,
          last_interaction: null,
          connected: false,
          created_at: expect.stringMatching(ISO),
        });
      });

      it('pages with limit and offset, up to a limit of 100', async () => {
        const rest = await request(url).get('/v1/contacts?offset=20').set(user.auth).expect(200);
        expect(rest.body).toMatchObject({ total: 25, limit: 20, offset: 20 });
        expect(rest.body.contacts.map((c: { name: string }) => c.name)).toEqual([20, 21, 22, 23, 24].map((i) => `Contact ${i}`));
        const all = await request(url).get('/v1/contacts?limit=100').set(user.auth).expect(200);
        expect(all.body).toMatchObject({ total: 25, limit: 100, offset: 0 });
        expect(all.body.contacts).toHaveLength(25);
        const beyond = await request(url).get('/v1/contacts?limit=5&offset=1000').set(user.auth).expect(200);
        expect(beyond.body).toEqual({ contacts: [], total: 25, limit: 5, offset: 1000 });
      });

      it.each([
        ['limit=101', 'limit'],
        ['limit=0', 'limit'],
        ['limit=-1', 'limit'],
        ['limit=1.5', 'limit'],
        ['limit=abc', 'limit'],
        ['limit=', 'limit'],
        ['limit=1&limit=2', 'limit'],
        ['offset=-1', 'offset'],
        ['offset=2.5', 'offset'],
        ['offset=x', 'offset'],
      ])('refuses ?%s with 400 BAD_REQUEST naming %s', async (query, field) => {
        expectBadRequest(await request(url).get(`/v1/contacts?${query}`).set(user.auth), field);
      });
    });

    it('orders the list by relationship score after messages, then by name', async () => {
      const user = await newUser();
      const [anna, ben, cleo] = [
        await addContact(user, { name: 'Dan' }),
        await addContact(user, { name: 'anna' }),
        await addContact(user, { name: 'Ben' }),
        await addContact(user, { name: 'Cleo' }),
      ].sort((a, b) => a.name.localeCompare(b.name));
      for (let i = 0; i < 3; i += 1) await send(user, cleo.id).expect(201);
      await send(user, ben.id).expect(201);

      const res = await request(url).get('/v1/contacts').set(user.auth).expect(200);
      expect(res.body.contacts.map((c: { name: string }) => c.name)).toEqual(['Cleo', 'Ben', 'anna', 'Dan']);
      // 100 · (1 - e^(-w/5)): three messages just now give 45.1, one gives 18.1.
      expect(res.body.contacts.map((c: { relationship_score: number }) => c.relationship_score)).toEqual([45.1, 18.1, 0, 0]);
      expect(res.body.contacts[0].last_interaction).toMatch(ISO);
      expect(res.body.contacts[2].last_interaction).toBeNull();

      // Ordering and paging happen together in the database.
      const second = await request(url).get('/v1/contacts?limit=2&offset=1').set(user.auth).expect(200);
      expect(second.body.contacts.map((c: { id: string }) => c.id)).toEqual([ben.id, anna.id]);
    });

    it('decays the interaction weight with a 30-day time constant', async () => {
      const user = alice;
      const old = await addContact(user, { name: 'Old Friend' });
      await send(user, old.id).expect(201);
      // Pretend that message was sent 30 days ago: the weight 1 has decayed to e^-1.
      await factories(dataSource).ageContactInteractions(old.id, '30 days');
      let res = await request(url).get(`/v1/contacts/${old.id}`).set(user.auth).expect(200);
      expect(res.body.relationship_score).toBe(7.1);
      // A new message adds 1 to the decayed weight: e^-1 + 1.
      await send(user, old.id).expect(201);
      res = await request(url).get(`/v1/contacts/${old.id}`).set(user.auth).expect(200);
      expect(res.body.relationship_score).toBe(23.9);
      // Many messages approach but never pass 100; a year of silence brings it back near 0 (no underflow errors).
      for (let i = 0; i < 40; i += 1) await send(user, old.id).expect(201);
      res = await request(url).get(`/v1/contacts/${old.id}`).set(user.auth).expect(200);
      expect(res.body.relationship_score).toBeGreaterThan(99);
      expect(res.body.relationship_score).toBeLessThanOrEqual(100);
      await factories(dataSource).ageContactInteractions(old.id, '100 years');
      res = await request(url).get(`/v1/contacts/${old.id}`).set(user.auth).expect(200);
      expect(res.body.relationship_score).toBe(0);
      await send(user, old.id).expect(201);
    });
  });

  describe('groups', () => {
    it('creates, reads, lists, updates and deletes a group', async () => {
      const user = await newUser();
      const [a, b, c] = [
        await addContact(user, { name: 'A' }),
        await addContact(user, { name: 'B' }),
        await addContact(user, { name: 'C' }),
      ];
      const group = await addGroup(user, 'Friends', [a.id, b.id]);
      expect(group).toEqual({
        id: expect.stringMatching(/^grp_[0-9A-Za-z]{22}$/),
        name: 'Friends',
        member_ids: expect.arrayContaining([a.id, b.id]),
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      });
      expect(group.member_ids).toHaveLength(2);
      await request(url).get(`/v1/groups/${group.id}`).set(user.auth).expect(200, group);

      const renamed = await request(url).patch(`/v1/groups/${group.id}`).set(user.auth).send({ name: 'Close friends' }).expect(200);
      expect(renamed.body).toMatchObject({ name: 'Close friends', member_ids: group.member_ids });
      const replaced = await request(url)
        .patch(`/v1/groups/${group.id}`)
        .set(user.auth)
        .send({ member_ids: [c.id, b.id] })
        .expect(200);
      expect(replaced.body.name).toBe('Close friends');
      expect([...replaced.body.member_ids].sort()).toEqual([b.id, c.id].sort());
      expect(Date.parse(replaced.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(group.updated_at));
      const emptied = await request(url).patch(`/v1/groups/${group.id}`).set(user.auth).send({ member_ids: [] }).expect(200);
      expect(emptied.body.member_ids).toEqual([]);

      await addGroup(user, 'Another', []);
      const list = await request(url).get('/v1/groups').set(user.auth).expect(200);
      expect(list.body).toEqual({ groups: expect.any(Array), total: 2, limit: 20, offset: 0 });
      expect(list.body.groups.map((g: { name: string }) => g.name)).toEqual(['Another', 'Close friends']);
      const page = await request(url).get('/v1/groups?limit=1&offset=1').set(user.auth).expect(200);
      expect(page.body).toMatchObject({ total: 2, limit: 1, offset: 1, groups: [{ id: group.id }] });
      // A page past the end has no row to carry the total: it is counted on its own.
      const beyond = await request(url).get('/v1/groups?offset=50').set(user.auth).expect(200);
      expect(beyond.body).toEqual({ groups: [], total: 2, limit: 20, offset: 50 });
      const stranger = await newUser();
      expect((await request(url).get('/v1/groups').set(stranger.auth).expect(200)).body).toEqual({
        groups: [],
        total: 0,
        limit: 20,
        offset: 0,
      });
      expectBadRequest(await request(url).get('/v1/groups?limit=101').set(user.auth), 'limit');
      expectBadRequest(await request(url).get('/v1/groups?offset=-1').set(user.auth), 'offset');

      await request(url).delete(`/v1/groups/${group.id}`).set(user.auth).expect(204, '');
      expectNotFound(await request(url).get(`/v1/groups/${group.id}`).set(user.auth));
      // The members are still contacts.
      await request(url).get(`/v1/contacts/${b.id}`).set(user.auth).expect(200);
    });

    it("refuses a member that is not one of the caller's contacts with 400 BAD_REQUEST naming it", async () => {
      const user = alice;
      const mine = await addContact(user, { name: 'Mine' });
      const theirs = await addContact(bob, { name: 'Theirs' });
      const unknown = newId('con');
      for (const foreign of [theirs.id, unknown, 'not-a-contact']) {
        const res = await request(url)
          .post('/v1/groups')
          .set(user.auth)
          .send({ name: 'Mixed', member_ids: [mine.id, foreign] });
        expectBadRequest(res, foreign);
      }
      const group = await addGroup(user, 'Mine only', [mine.id]);
      expectBadRequest(
        await request(url)
          .patch(`/v1/groups/${group.id}`)
          .set(user.auth)
          .send({ member_ids: [theirs.id] }),
        theirs.id,
      );
      const [{ count }] = await dataSource.query(`SELECT count(*)::int AS count FROM groups WHERE user_id = $1 AND name = 'Mixed'`, [
        user.id,
      ]);
      expect(count).toBe(0);
      const unchanged = await request(url).get(`/v1/groups/${group.id}`).set(user.auth).expect(200);
      expect(unchanged.body.member_ids).toEqual([mine.id]);
    });

    it.each([
      ['a missing name', { member_ids: [] }, 'name'],
      ['a name of 201 characters', { name: 'g'.repeat(201) }, 'name'],
      ['member_ids that is not an array', { name: 'G', member_ids: 'con_x' }, 'member_ids'],
      ['a repeated member id', { name: 'G', member_ids: ['con_AAAAAAAAAAAAAAAAAAAAAA', 'con_AAAAAAAAAAAAAAAAAAAAAA'] }, 'member_ids'],
      ['257 members', { name: 'G', member_ids: Array.from({ length: 257 }, () => newId('con')) }, 'member_ids'],
    ])('refuses %s with 400 BAD_REQUEST naming the field', async (_case, body, field) => {
      expectBadRequest(await request(url).post('/v1/groups').set(alice.auth).send(body), field);
    });
  });

  describe('sending messages', () => {
    it('sends to a contact: 201 with id, status waiting (nobody on the service has its address yet) and created_at; one recipient row; last_interaction updated', async () => {
      const user = alice;
      const contact = await addContact(user, { name: 'Reader' });
      const res = await send(user, contact.id, 'Hi there').expect(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^msg_[0-9A-Za-z]{22}$/),
        status: 'waiting',
        created_at: expect.stringMatching(ISO),
      });
      const recipients = await dataSource.query(
        `SELECT contact_id, recipient_user_id, status FROM message_recipients WHERE message_id = $1`,
        [res.body.id],
      );
      expect(recipients).toEqual([{ contact_id: contact.id, recipient_user_id: null, status: 'sent' }]);
      const [message] = await dataSource.query(
        `SELECT sender_id, recipient_kind, recipient_id, type, content FROM messages WHERE id = $1`,
        [res.body.id],
      );
      expect(message).toEqual({
        sender_id: user.id,
        recipient_kind: 'contact',
        recipient_id: contact.id,
        type: 'text',
        content: 'Hi there',
      });
      const read = await request(url).get(`/v1/contacts/${contact.id}`).set(user.auth).expect(200);
      expect(read.body.last_interaction).toBe(res.body.created_at);
    });

    it('fans a group message out to a recipient row per member and updates every member’s last_interaction', async () => {
      const [user, linkedUser] = [dave, bob];
      const members = [
        await addContact(user, { name: 'M1' }),
        await addContact(user, { name: 'M2', email: 'bob.cm@example.com' }),
        await addContact(user, { name: 'M3' }),
      ];
      const outsider = await addContact(user, { name: 'Not in the group' });
      const group = await addGroup(
        user,
        'Team',
        members.map((m) => m.id),
      );
      const res = await send(user, group.id, '**Stand-up** at ten', { type: 'markdown' }).expect(201);

      const rows: Array<{ contact_id: string; recipient_user_id: string | null }> = await dataSource.query(
        `SELECT contact_id, recipient_user_id FROM message_recipients WHERE message_id = $1 ORDER BY contact_id`,
        [res.body.id],
      );
      expect(rows).toEqual(
        members
          .map((m) => ({ contact_id: m.id, recipient_user_id: m.name === 'M2' ? linkedUser.id : null }))
          .sort((a, b) => (a.contact_id < b.contact_id ? -1 : 1)),
      );
      for (const member of members) {
        const read = await request(url).get(`/v1/contacts/${member.id}`).set(user.auth).expect(200);
        expect(read.body).toMatchObject({ last_interaction: res.body.created_at, relationship_score: 18.1 });
      }
      const untouched = await request(url).get(`/v1/contacts/${outsider.id}`).set(user.auth).expect(200);
      expect(untouched.body).toMatchObject({ last_interaction: null, relationship_score: 0 });

      const [event] = await dataSource.query(`SELECT payload FROM events WHERE type = 'message.created' AND payload->>'message_id' = $1`, [
        res.body.id,
      ]);
      expect(event.payload).toEqual({
        message_id: res.body.id,
        sender_id: user.id,
        recipient_id: group.id,
        recipient_kind: 'group',
        recipient_user_ids: [linkedUser.id],
        sender_contact_ids: {},
        contact_ids: expect.arrayContaining(members.map((m) => m.id)),
        group_name: 'Team',
        type: 'markdown',
        content: '**Stand-up** at ten',
        created_at: res.body.created_at,
      });
      expect(event.payload.contact_ids).toHaveLength(3);
    });

    it('records a message.created event in the events table in the send transaction', async () => {
      const user = dave;
      const contact = await addContact(user, { name: 'Carol', email: 'carol.cm@example.com' });
      const res = await send(user, contact.id, 'event please').expect(201);
      const events = await dataSource.query(
        `SELECT id, payload FROM events WHERE type = 'message.created' AND payload->>'message_id' = $1`,
        [res.body.id],
      );
      expect(events).toHaveLength(1);
      expect(events[0].id).toMatch(/^evt_/);
      expect(events[0].payload).toEqual({
        message_id: res.body.id,
        sender_id: user.id,
        recipient_id: contact.id,
        recipient_kind: 'contact',
        recipient_user_ids: [carol.id],
        sender_contact_ids: {},
        contact_ids: [contact.id],
        type: 'text',
        content: 'event please',
        created_at: res.body.created_at,
      });
    });

    it('refuses a message to an empty group with 400 BAD_REQUEST and sends nothing', async () => {
      const user = alice;
      const group = await addGroup(user, 'Nobody', []);
      expectBadRequest(await send(user, group.id), 'no members');
      const [{ count }] = await dataSource.query(`SELECT count(*)::int AS count FROM messages WHERE recipient_id = $1`, [group.id]);
      expect(count).toBe(0);
    });

    describe('refuses invalid messages with 400 BAD_REQUEST naming the field', () => {
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['empty content', { content: '' }, 'content'],
        ['content of only whitespace', { content: ' \n\t ' }, 'content'],
        ['content of 4001 characters', { content: 'x'.repeat(4001) }, 'content'],
        ['missing content', { content: undefined }, 'content'],
        ['an unknown type', { type: 'html' }, 'type'],
        ['a missing recipient_id', { recipient_id: undefined }, 'recipient_id'],
        ['a recipient_id that is not a string', { recipient_id: 7 }, 'recipient_id'],
      ];
      it.each(cases)('%s', async (_case, override, field) => {
        const user = alice;
        const contact = await addContact(user, { name: 'Target' });
        const body = { recipient_id: contact.id, content: 'hello', ...override };
        expectBadRequest(await request(url).post('/v1/messages').set(user.auth).send(body), field);
      });

      it('accepts content of exactly 4000 characters and type markdown', async () => {
        const user = alice;
        const contact = await addContact(user, { name: 'Target' });
        await send(user, contact.id, 'z'.repeat(4000)).expect(201);
        await send(user, contact.id, '# title', { type: 'markdown' }).expect(201);
      });
    });

    it('answers 404 NOT_FOUND for an unknown recipient', async () => {
      const user = alice;
      for (const recipient of [newId('con'), newId('grp'), 'con_doesnotexist', 'usr_someone']) {
        expectNotFound(await send(user, recipient));
      }
    });

    describe('Idempotency-Key', () => {
      it('answers a repeat with the first response, marked Idempotent-Replayed, without sending again', async () => {
        const user = alice;
        const contact = await addContact(user, { name: 'Once' });
        const body = { recipient_id: contact.id, content: 'only once' };
        const first = await request(url).post('/v1/messages').set(user.auth).set('Idempotency-Key', 'key-replay').send(body).expect(201);
        expect(first.headers['idempotent-replayed']).toBeUndefined();
        const again = await request(url)
          .post('/v1/messages')
          .set(user.auth)
          .set('Idempotency-Key', 'key-replay')
          .send({ ...body, type: 'text' })
          .expect(201);
        expect(again.body).toEqual(first.body);
        expect(again.headers['idempotent-replayed']).toBe('true');
        const [{ count }] = await dataSource.query(`SELECT count(*)::int AS count FROM messages WHERE recipient_id = $1`, [contact.id]);
        expect(count).toBe(1);
        // The same key of another user is another key.
        const other = bob;
        const otherContact = await addContact(other, { name: 'Theirs' });
        const theirs = await request(url)
          .post('/v1/messages')
          .set(other.auth)
          .set('Idempotency-Key', 'key-replay')
          .send({ recipient_id: otherContact.id, content: 'only once' })
          .expect(201);
        expect(theirs.body.id).not.toBe(first.body.id);
      });

      it('creates exactly one message when five requests with the same key race', async () => {
        const user = alice;
        const contact = await addContact(user, { name: 'Race' });
        const answers = await Promise.all(
          Array.from({ length: 5 }, () =>
            request(url)
              .post('/v1/messages')
              .set(user.auth)
              .set('Idempotency-Key', 'key-race')
              .send({ recipient_id: contact.id, content: 'race' }),
          ),
        );
        expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201]);
        expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
        expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(4);
        const [{ count }] = await dataSource.query(`SELECT count(*)::int AS count FROM messages WHERE recipient_id = $1`, [contact.id]);
        expect(count).toBe(1);
        const [{ events }] = await dataSource.query(
          `SELECT count(*)::int AS events FROM events WHERE type = 'message.created' AND payload->>'recipient_id' = $1`,
          [contact.id],
        );
        expect(events).toBe(1);
        const read = await request(url).get(`/v1/contacts/${contact.id}`).set(user.auth).expect(200);
        expect(read.body.relationship_score).toBe(18.1);
      });

      it('refuses the same key with a different body with 400 BAD_REQUEST', async () => {
        const user = alice;
        const contact = await addContact(user, { name: 'Different' });
        await request(url)
          .post('/v1/messages')
          .set(user.auth)
          .set('Idempotency-Key', 'key-diff')
          .send({ recipient_id: contact.id, content: 'one' })
          .expect(201);
        const res = await request(url)
          .post('/v1/messages')
          .set(user.auth)
          .set('Idempotency-Key', 'key-diff')
          .send({ recipient_id: contact.id, content: 'two' });
        expectBadRequest(res, 'Idempotency-Key');
      });

      it('frees the key when the first attempt failed', async () => {
        const user = alice;
        const contact = await addContact(user, { name: 'Later' });
        const missing = newId('con');
        expectNotFound(
          await request(url)
            .post('/v1/messages')
            .set(user.auth)
            .set('Idempotency-Key', 'key-fail')
            .send({ recipient_id: missing, content: 'x' }),
        );
        await request(url)
          .post('/v1/messages')
          .set(user.auth)
          .set('Idempotency-Key', 'key-fail')
          .send({ recipient_id: contact.id, content: 'x' })
          .expect(201);
      });
    });
  });

  describe('history', () => {
    it('lists a contact thread newest first with keyset cursors, including inbound messages from the linked user', async () => {
      const alice = await newUser('alice.history@example.com', 'Alice');
      const bob = await newUser('bob.history@example.com', 'Bob');
      const bobForAlice = await addContact(alice, { name: 'Bob', email: 'bob.history@example.com' });
      const aliceForBob = await addContact(bob, { name: 'Alice', email: 'alice.history@example.com' });
      // Each added the other's verified address: the contacts are connected.
      expect(bobForAlice.connected).toBe(false);
      expect(aliceForBob.connected).toBe(true);
      await request(url)
        .get(`/v1/contacts/${bobForAlice.id}`)
        .set(alice.auth)
        .expect(200, { ...bobForAlice, connected: true });
      // Not in the thread: a message to a group Bob is in, and a message to someone else.
      const group = await addGroup(alice, 'With Bob', [bobForAlice.id]);
      const someoneElse = await addContact(alice, { name: 'Someone else' });

      const sent: string[] = [];
      for (let i = 1; i <= 5; i += 1) {
        const from = i % 2 === 0 ? bob : alice;
        const to = i % 2 === 0 ? aliceForBob.id : bobForAlice.id;
        sent.push((await send(from, to, `message ${i}`).expect(201)).body.id);
      }
      const groupMessage = (await send(alice, group.id, 'to the group').expect(201)).body;
      await send(alice, someoneElse.id, 'elsewhere').expect(201);

      const first = await request(url).get(`/v1/messages?with=${bobForAlice.id}&limit=2`).set(alice.auth).expect(200);
      expect(first.body).toEqual({ messages: expect.any(Array), next_cursor: expect.any(String) });
      expect(first.body.messages).toEqual([
        {
          id: sent[4],
          direction: 'outbound',
          sender_contact_id: null,
          recipient_id: bobForAlice.id,
          recipient_kind: 'contact',
          group_id: null,
          type: 'text',
          content: 'message 5',
          status: 'sent',
          delivered_at: null,
          read_at: null,
          waiting_recipients: 0,
          created_at: expect.stringMatching(ISO),
        },
        {
          id: sent[3],
          direction: 'inbound',
          sender_contact_id: bobForAlice.id,
          recipient_id: alice.id,
          recipient_kind: 'contact',
          group_id: null,
          type: 'text',
          content: 'message 4',
          status: 'sent',
          delivered_at: null,
          read_at: null,
          waiting_recipients: 0,
          created_at: expect.stringMatching(ISO),
        },
      ]);
      const second = await request(url)
        .get(`/v1/messages?with=${bobForAlice.id}&limit=2&cursor=${first.body.next_cursor}`)
        .set(alice.auth)
        .expect(200);
      expect(second.body.messages.map((m: { id: string }) => m.id)).toEqual([sent[2], sent[1]]);
      const third = await request(url)
        .get(`/v1/messages?with=${bobForAlice.id}&limit=2&cursor=${second.body.next_cursor}`)
        .set(alice.auth)
        .expect(200);
      expect(third.body).toEqual({ messages: [expect.objectContaining({ id: sent[0], content: 'message 1' })], next_cursor: null });

      // Default limit 20. Bob sees the thread from his side: what Alice sent him directly is inbound; her group message
      // belongs to the group's thread, not to this one.
      const bobSide = await request(url).get(`/v1/messages?with=${aliceForBob.id}`).set(bob.auth).expect(200);
      expect(bobSide.body.next_cursor).toBeNull();
      expect(bobSide.body.messages.map((m: { id: string; direction: string }) => [m.id, m.direction])).toEqual([
        [sent[4], 'inbound'],
        [sent[3], 'outbound'],
        [sent[2], 'inbound'],
        [sent[1], 'outbound'],
        [sent[0], 'inbound'],
      ]);

      // A group thread holds what was sent to the group: the owner's side and the member's.
      const groupThread = await request(url).get(`/v1/messages?with=${group.id}`).set(alice.auth).expect(200);
      expect(groupThread.body.messages).toEqual([
        expect.objectContaining({ direction: 'outbound', recipient_id: group.id, content: 'to the group' }),
      ]);
      const bobGroupThread = await request(url).get(`/v1/messages?with=${group.id}`).set(bob.auth).expect(200);
      expect(bobGroupThread.body.messages).toEqual([
        expect.objectContaining({
          id: groupMessage.id,
          direction: 'inbound',
          recipient_kind: 'group',
          group_id: group.id,
          sender_contact_id: aliceForBob.id,
        }),
      ]);

      // Agents read the same items through MessagesService.conversation.
      const conversation = await app.get(MessagesService).conversation(alice.id, bobForAlice.id, 3);
      expect(conversation).toEqual(first.body.messages.concat(second.body.messages[0]));
    });

    it('keeps pages disjoint when messages share a timestamp', async () => {
      const user = alice;
      const contact = await addContact(user, { name: 'Same time' });
      const ids: string[] = [];
      for (let i = 0; i < 4; i += 1) ids.push((await send(user, contact.id, `m${i}`).expect(201)).body.id);
      await factories(dataSource).messagesCreatedAt(ids, '2030-01-01T00:00:00.123456Z');
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: request.Response = await request(url)
          .get(`/v1/messages?with=${contact.id}&limit=1${cursor ? `&cursor=${cursor}` : ''}`)
          .set(user.auth)
          .expect(200);
        seen.push(...res.body.messages.map((m: { id: string }) => m.id));
        cursor = res.body.next_cursor;
      } while (cursor);
      expect(seen).toHaveLength(4);
      expect(new Set(seen)).toEqual(new Set(ids));
    });

    it.each([
      ['a missing with', '', 'with'],
      ['a limit over 100', 'with=WITH&limit=101', 'limit'],
      ['a limit of 0', 'with=WITH&limit=0', 'limit'],
      ['a garbage cursor', 'with=WITH&cursor=not*base64', 'cursor'],
      ['a cursor that decodes to nonsense', `with=WITH&cursor=${Buffer.from('hello world').toString('base64url')}`, 'cursor'],
      [
        'a cursor with an impossible date',
        `with=WITH&cursor=${Buffer.from(`2024-02-30T00:00:00.000000Z ${newId('msg')}`).toString('base64url')}`,
        'cursor',
      ],
    ])('refuses %s with 400 BAD_REQUEST', async (_case, query, field) => {
      const user = alice;
      const contact = await addContact(user, { name: 'Thread' });
      expectBadRequest(
        await request(url)
          .get(`/v1/messages?${query.replace('WITH', contact.id)}`)
          .set(user.auth),
        field,
      );
    });

    it('answers 404 NOT_FOUND for an unknown thread', async () => {
      const user = alice;
      expectNotFound(
        await request(url)
          .get(`/v1/messages?with=${newId('con')}`)
          .set(user.auth),
      );
      expectNotFound(
        await request(url)
          .get(`/v1/messages?with=${newId('grp')}`)
          .set(user.auth),
      );
      expectNotFound(await request(url).get('/v1/messages?with=nonsense').set(user.auth));
      await expect(app.get(MessagesService).conversation(user.id, newId('con'), 10)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });
  });

  describe("another user's contacts, groups and messages", () => {
    it('are 404 NOT_FOUND on every route and never listed', async () => {
      const owner = carol;
      const intruder = await newUser();
      const contact = await addContact(owner, { name: 'Private', email: 'private@example.com' });
      const group = await addGroup(owner, 'Private group', [contact.id]);
      const message = (await send(owner, contact.id, 'secret').expect(201)).body;

      const attempts = [
        request(url).get(`/v1/contacts/${contact.id}`).set(intruder.auth),
        request(url).patch(`/v1/contacts/${contact.id}`).set(intruder.auth).send({ name: 'Mine now' }),
        request(url).delete(`/v1/contacts/${contact.id}`).set(intruder.auth),
        request(url).get(`/v1/groups/${group.id}`).set(intruder.auth),
        request(url).patch(`/v1/groups/${group.id}`).set(intruder.auth).send({ name: 'Mine now' }),
        request(url).delete(`/v1/groups/${group.id}`).set(intruder.auth),
        request(url).post('/v1/messages').set(intruder.auth).send({ recipient_id: contact.id, content: 'hi' }),
        request(url).post('/v1/messages').set(intruder.auth).send({ recipient_id: group.id, content: 'hi' }),
        request(url).get(`/v1/messages?with=${contact.id}`).set(intruder.auth),
        request(url).get(`/v1/messages?with=${group.id}`).set(intruder.auth),
      ];
      for (const res of await Promise.all(attempts)) expectNotFound(res);

      // A cursor naming the owner's message reveals nothing of it.
      const own = await addContact(intruder, { name: 'Own' });
      const cursor = Buffer.from(`2999-01-01T00:00:00.000000Z ${message.id}`).toString('base64url');
      const thread = await request(url).get(`/v1/messages?with=${own.id}&cursor=${cursor}`).set(intruder.auth).expect(200);
      expect(thread.body).toEqual({ messages: [], next_cursor: null });

      const contacts = await request(url).get('/v1/contacts').set(intruder.auth).expect(200);
      expect(contacts.body).toMatchObject({ total: 1, contacts: [{ id: own.id }] });
      const groups = await request(url).get('/v1/groups').set(intruder.auth).expect(200);
      expect(groups.body).toEqual({ groups: [], total: 0, limit: 20, offset: 0 });
      await expect(app.get(MessagesService).conversation(intruder.id, contact.id, 10)).rejects.toMatchObject({ code: 'NOT_FOUND' });

      // Nothing changed for the owner.
      const still = await request(url).get(`/v1/contacts/${contact.id}`).set(owner.auth).expect(200);
      expect(still.body.name).toBe('Private');
      await request(url).get(`/v1/groups/${group.id}`).set(owner.auth).expect(200);
    });

    it('refuses a request without a bearer token with 401', async () => {
      for (const path of ['/v1/contacts', '/v1/groups', `/v1/messages?with=${newId('con')}`]) {
        const res = await request(url).get(path).expect(401);
        expect(res.body.error).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
      }
    });
  });

  it('provides contacts, groups and messages sections for the personal data export', async () => {
    const user = await newUser('export.me@example.com');
    const friend = await newUser('export.friend@example.com');
    const contact = await addContact(user, { name: 'Friend', email: 'export.friend@example.com' });
    const group = await addGroup(user, 'Export group', [contact.id]);
    const sent = (await send(user, group.id, 'to the group').expect(201)).body;
    const mine = await addContact(friend, { name: 'Me', email: 'export.me@example.com' });
    const received = (await send(friend, mine.id, 'reply').expect(201)).body;

    const manager = dataSource.manager;
    expect(app.get(ContactsPersonalData).section).toBe('contacts');
    expect(await app.get(ContactsPersonalData).exportFor(user.id, manager)).toEqual([
      expect.objectContaining({ id: contact.id, name: 'Friend', email: 'export.friend@example.com', connected: true }),
    ]);
    expect(await app.get(GroupsPersonalData).exportFor(user.id, manager)).toEqual([
      expect.objectContaining({ id: group.id, name: 'Export group', member_ids: [contact.id] }),
    ]);
    const messages = (await app.get(MessagesPersonalData).exportFor(user.id, manager)) as { sent: unknown[]; received: unknown[] };
    expect(messages.sent).toEqual([
      expect.objectContaining({
        id: sent.id,
        recipient_kind: 'group',
        recipient_id: group.id,
        content: 'to the group',
        created_at: sent.created_at,
        recipients: [{ contact_id: contact.id, status: 'sent', delivered_at: null, read_at: null }],
      }),
    ]);
    expect(messages.received).toEqual([
      expect.objectContaining({ id: received.id, sender_contact_id: contact.id, content: 'reply', created_at: received.created_at }),
    ]);
    // Other users appear by the exporting user's contact ids only.
    expect(JSON.stringify(messages).match(/usr_[A-Za-z0-9]+/g) ?? []).toEqual([]);
    expect('eraseWithSoul' in app.get(MessagesPersonalData)).toBe(false);
  });
});
