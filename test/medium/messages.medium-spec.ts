import { ApiError } from '../../src/common/errors/api-error';
import { ContactsModule } from '../../src/modules/contacts/contacts.module';
import { ContactsService } from '../../src/modules/contacts/contacts.service';
import { ContactSends } from '../../src/modules/messages/contact-sends.service';
import { MessageReceipts } from '../../src/modules/messages/message-receipts.service';
import { MessagesRepository } from '../../src/modules/messages/messages.repository';
import { MessagesModule } from '../../src/modules/messages/messages.module';
import { MessagesService } from '../../src/modules/messages/messages.service';
import { MediumContext, mediumContext } from './medium';

describe('MessagesService and MessageReceipts (medium: real module, real database)', () => {
  let ctx: MediumContext;
  let messages: MessagesService;
  let receipts: MessageReceipts;
  let contacts: ContactsService;
  let people = 0;

  /** A user with a verified address, as a login with a verified email leaves them. */
  async function person(): Promise<{ id: string; email: string }> {
    people += 1;
    const email = `person-${people}@medium.example`;
    return { ...(await ctx.make.user({ email, verifiedEmail: email })), email };
  }

  beforeAll(async () => {
    ctx = await mediumContext([ContactsModule, MessagesModule]);
    messages = ctx.get(MessagesService);
    receipts = ctx.get(MessageReceipts);
    contacts = ctx.get(ContactsService);
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('keeps a message for a contact with no account as waiting, with nobody to receive it', async () => {
    const ada = await person();
    const nobody = await ctx.make.contact(ada.id, { name: 'Not yet here', email: 'not-yet@medium.example' });
    const sent = await messages.send(ada.id, { recipient_id: nobody.id, content: 'hello?' });
    expect(sent).toMatchObject({ status: 201, replayed: false, body: { status: 'waiting' } });
  });

  it('sends no receipt until the recipient has added the sender back, then exactly one of each kind', async () => {
    const ada = await person();
    const bob = await person();
    const bobAtAda = await ctx.make.contact(ada.id, { name: 'Bob', email: bob.email });
    const sent = await messages.send(ada.id, { recipient_id: bobAtAda.id, content: 'hi Bob' });
    expect(sent.body.status).toBe('sent');
    const id = sent.body.id;

    // Bob has not added Ada: a receipt would tell her that the address has an account, and when it is online.
    expect(await receipts.markDelivered(bob.id, id)).toBeNull();
    expect(await receipts.markRead(bob.id, [id])).toEqual([]);
    const [unknownSender] = await receipts.receivedSince(bob.id, new Date(0), 10);
    expect(unknownSender).toMatchObject({ id, sender_contact_id: null, status: 'sent', content: 'hi Bob' });

    const adaAtBob = await ctx.make.contact(bob.id, { name: 'Ada', email: ada.email });
    const delivered = await receipts.markDelivered(bob.id, id);
    expect(delivered).toEqual({ message_id: id, sender_id: ada.id, contact_id: bobAtAda.id, at: expect.any(String) });
    // Several gateway instances may hold Bob's sockets: only the first one reports.
    expect(await receipts.markDelivered(bob.id, id)).toBeNull();

    const read = await receipts.markRead(bob.id, [id, id]);
    expect(read).toEqual([{ message_id: id, sender_id: ada.id, contact_id: bobAtAda.id, at: expect.any(String) }]);
    expect(await receipts.markRead(bob.id, [id])).toEqual([]);
    const [known] = await receipts.receivedSince(bob.id, new Date(0), 10);
    expect(known).toMatchObject({ id, sender_contact_id: adaAtBob.id, status: 'read' });
  });

  it("gives no receipt to anyone but the message's recipient", async () => {
    const ada = await person();
    const bob = await person();
    const eve = await person();
    const bobAtAda = await ctx.make.contact(ada.id, { name: 'Bob', email: bob.email });
    await ctx.make.contact(eve.id, { name: 'Ada', email: ada.email });
    const { body } = await messages.send(ada.id, { recipient_id: bobAtAda.id, content: 'for Bob only' });
    expect(await receipts.markDelivered(eve.id, body.id)).toBeNull();
    expect(await receipts.markRead(eve.id, [body.id])).toEqual([]);
    expect(await receipts.receivedSince(eve.id, new Date(0), 10)).toEqual([]);
  });

  it("refuses another user's contact as a recipient exactly like an unknown one", async () => {
    const ada = await person();
    const eve = await person();
    const evesContact = await ctx.make.contact(eve.id, { name: 'Private' });
    const refused = await messages.send(ada.id, { recipient_id: evesContact.id, content: 'x' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: 'NOT_FOUND', message: `No contact or group ${evesContact.id}` });
  });

  it('replays a send retried with the same Idempotency-Key without sending twice, and counts one interaction', async () => {
    const ada = await person();
    const bob = await ctx.make.contact(ada.id, { name: 'Bob' });
    const first = await messages.send(ada.id, { recipient_id: bob.id, content: 'once' }, 'send-once');
    const retry = await messages.send(ada.id, { recipient_id: bob.id, content: 'once', type: 'text' }, 'send-once');
    expect(retry).toEqual({ ...first, replayed: true });
    expect(first.replayed).toBe(false);
    const history = await messages.conversation(ada.id, bob.id);
    expect(history.map((m) => m.id)).toEqual([first.body.id]);
    // One message today: 100 · (1 - e^(-1/5)).
    expect((await contacts.get(ada.id, bob.id)).relationship_score).toBe(18.1);
  });

  describe('a send to a contact in one statement', () => {
    it('writes the message, its recipient row, the interaction, the held event and the key with its response together', async () => {
      const ada = await person();
      const bob = await person();
      const bobAtAda = await ctx.make.contact(ada.id, { name: 'Bob', email: bob.email });
      const adaAtBob = await ctx.make.contact(bob.id, { name: 'Ada', email: ada.email });
      const sent = await messages.send(ada.id, { recipient_id: bobAtAda.id, content: 'one trip' }, 'one-statement');
      expect(sent).toEqual({
        status: 201,
        replayed: false,
        body: { id: expect.stringMatching(/^msg_/), status: 'sent', created_at: expect.any(String) },
      });
      const { id, created_at: createdAt } = sent.body;

      const [message] = await ctx.dataSource.query(
        `SELECT sender_id, recipient_kind, recipient_id, type, content, created_at FROM messages WHERE id = $1`,
        [id],
      );
      expect(message).toMatchObject({
        sender_id: ada.id,
        recipient_kind: 'contact',
        recipient_id: bobAtAda.id,
        type: 'text',
        content: 'one trip',
      });
      // The answer's created_at is the row's, at millisecond precision, as the general path answers it.
      expect((message.created_at as Date).toISOString()).toBe(createdAt);
      expect(
        await ctx.dataSource.query(`SELECT contact_id, recipient_user_id, status FROM message_recipients WHERE message_id = $1`, [id]),
      ).toEqual([{ contact_id: bobAtAda.id, recipient_user_id: bob.id, status: 'sent' }]);
      const [contact] = await ctx.dataSource.query(`SELECT interaction_weight, last_interaction FROM contacts WHERE id = $1`, [
        bobAtAda.id,
      ]);
      expect(contact.interaction_weight).toBeCloseTo(1, 5);
      expect((contact.last_interaction as Date).toISOString()).toBe(createdAt);

      const [event] = await ctx.dataSource.query(
        `SELECT type, payload, dispatched_at, available_at - created_at >= interval '900 milliseconds' AS held FROM events WHERE payload->>'message_id' = $1`,
        [id],
      );
      expect(event).toMatchObject({ type: 'message.created', held: true });
      expect(event.payload).toEqual({
        message_id: id,
        sender_id: ada.id,
        recipient_id: bobAtAda.id,
        recipient_kind: 'contact',
        recipient_user_ids: [bob.id],
        sender_contact_ids: { [bob.id]: adaAtBob.id },
        contact_ids: [bobAtAda.id],
        type: 'text',
        content: 'one trip',
        created_at: createdAt,
      });

      const [key] = await ctx.dataSource.query(
        `SELECT response_status, response_body FROM idempotency_keys WHERE owner_id = $1 AND key = $2`,
        [ada.id, 'one-statement'],
      );
      expect(key).toEqual({ response_status: 201, response_body: sent.body });
      const replay = await messages.send(ada.id, { recipient_id: bobAtAda.id, content: 'one trip' }, 'one-statement');
      expect(replay).toEqual({ status: 201, replayed: true, body: sent.body });
    });

    it('takes over an expired key for a new request, and refuses a live one used with another body', async () => {
      const ada = await person();
      const bobAtAda = await ctx.make.contact(ada.id, { name: 'Bob', email: 'bob-expired@medium.example' });
      const first = await messages.send(ada.id, { recipient_id: bobAtAda.id, content: 'first' }, 'reused-key');
      await expect(messages.send(ada.id, { recipient_id: bobAtAda.id, content: 'other' }, 'reused-key')).rejects.toBeInstanceOf(ApiError);
      await ctx.dataSource.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE owner_id = $1 AND key = $2`, [
        ada.id,
        'reused-key',
      ]);
      const second = await messages.send(ada.id, { recipient_id: bobAtAda.id, content: 'other' }, 'reused-key');
      expect(second).toMatchObject({ status: 201, replayed: false, body: { status: 'waiting' } });
      expect(second.body.id).not.toBe(first.body.id);
      const [{ count }] = await ctx.dataSource.query(`SELECT count(*)::int AS count FROM messages WHERE sender_id = $1`, [ada.id]);
      expect(count).toBe(2);
    });

    it("writes nothing for another user's contact, whatever the key", async () => {
      const ada = await person();
      const eve = await person();
      const eveContact = await ctx.make.contact(eve.id, { name: 'Someone', email: 'someone@medium.example' });
      await expect(messages.send(ada.id, { recipient_id: eveContact.id, content: 'not mine' }, 'k-other')).rejects.toBeInstanceOf(ApiError);
      expect(await ctx.dataSource.query(`SELECT 1 FROM idempotency_keys WHERE owner_id = $1`, [ada.id])).toEqual([]);
      expect(await ctx.dataSource.query(`SELECT 1 FROM messages WHERE sender_id = $1`, [ada.id])).toEqual([]);
    });

    it('sends once for 30 concurrent requests with one key, and all answer the same message', async () => {
      const ada = await person();
      const bobAtAda = await ctx.make.contact(ada.id, { name: 'Bob', email: 'bob-race@medium.example' });
      const outcomes = await Promise.all(
        Array.from({ length: 30 }, () => messages.send(ada.id, { recipient_id: bobAtAda.id, content: 'once' }, 'race-key')),
      );
      expect(new Set(outcomes.map((o) => o.body.id)).size).toBe(1);
      expect(outcomes.filter((o) => !o.replayed)).toHaveLength(1);
      const [{ count }] = await ctx.dataSource.query(`SELECT count(*)::int AS count FROM messages WHERE sender_id = $1`, [ada.id]);
      expect(count).toBe(1);
    });
  });

  describe('sends that arrive together, written by one statement (ContactSends)', () => {
    it("writes what one-by-one sends write, in the order they were sent, and refuses what is not the sender's", async () => {
      const many = jest.spyOn(ctx.get(MessagesRepository), 'sendToContactMany');
      const ada = await person();
      const bob = await person();
      const eve = await person();
      const bobAtAda = await ctx.make.contact(ada.id, { name: 'Bob', email: bob.email });
      const adaAtBob = await ctx.make.contact(bob.id, { name: 'Ada', email: ada.email });
      const nobody = await ctx.make.contact(ada.id, { name: 'Not yet here', email: 'batch-nobody@medium.example' });
      const eveContact = await ctx.make.contact(eve.id, { name: 'Someone', email: 'batch-someone@medium.example' });
      many.mockClear();

      const [first, second, waiting, notMine] = await Promise.allSettled([
        messages.send(ada.id, { recipient_id: bobAtAda.id, content: 'first' }, 'batch-1'),
        messages.send(ada.id, { recipient_id: bobAtAda.id, content: 'second' }),
        messages.send(ada.id, { recipient_id: nobody.id, content: 'for later' }, 'batch-2'),
        messages.send(ada.id, { recipient_id: eveContact.id, content: 'not mine' }, 'batch-3'),
      ]);
      // One statement wrote the batch (the refused send then took the general path, which answered NOT_FOUND).
      expect(many).toHaveBeenCalledTimes(1);
      expect(many.mock.calls[0][0]).toHaveLength(4);
      expect(notMine).toMatchObject({ status: 'rejected', reason: expect.any(ApiError) });
      expect(await ctx.dataSource.query(`SELECT 1 FROM idempotency_keys WHERE owner_id = $1 AND key = 'batch-3'`, [ada.id])).toEqual([]);
      if (first.status !== 'fulfilled' || second.status !== 'fulfilled' || waiting.status !== 'fulfilled') throw new Error('a send failed');
      expect(first.value.body.status).toBe('sent');
      expect(waiting.value.body.status).toBe('waiting');

      // The thread keeps the order of sending, though the sends shared one transaction's now().
      const rows = await ctx.dataSource.query(
        `SELECT id, content, created_at FROM messages WHERE sender_id = $1 AND recipient_id = $2 ORDER BY created_at, id`,
        [ada.id, bobAtAda.id],
      );
      expect(rows.map((r: { content: string }) => r.content)).toEqual(['first', 'second']);
      expect((rows[0].created_at as Date).toISOString()).toBe(first.value.body.created_at);
      // Two sends to one contact are two interactions.
      const [contact] = await ctx.dataSource.query(`SELECT interaction_weight FROM contacts WHERE id = $1`, [bobAtAda.id]);
      expect(contact.interaction_weight).toBeCloseTo(2, 5);

      const [event] = await ctx.dataSource.query(`SELECT type, payload FROM events WHERE payload->>'message_id' = $1`, [
        first.value.body.id,
      ]);
      expect(event).toEqual({
        type: 'message.created',
        payload: {
          message_id: first.value.body.id,
          sender_id: ada.id,
          recipient_id: bobAtAda.id,
          recipient_kind: 'contact',
          recipient_user_ids: [bob.id],
          sender_contact_ids: { [bob.id]: adaAtBob.id },
          contact_ids: [bobAtAda.id],
          type: 'text',
          content: 'first',
          created_at: first.value.body.created_at,
        },
      });
      const [key] = await ctx.dataSource.query(
        `SELECT response_status, response_body FROM idempotency_keys WHERE owner_id = $1 AND key = 'batch-2'`,
        [ada.id],
      );
      expect(key).toEqual({ response_status: 201, response_body: waiting.value.body });
      many.mockRestore();
    });

    it('writes each send alone when the statement of the batch fails, so one bad send fails alone', async () => {
      const sends = ctx.get(ContactSends);
      const ada = await person();
      const bobAtAda = await ctx.make.contact(ada.id, { name: 'Bob', email: 'batch-fallback@medium.example' });
      const taken = await messages.send(ada.id, { recipient_id: bobAtAda.id, content: 'already here' });
      const send = (id: string, n: number) => ({
        id,
        senderId: ada.id,
        contactId: bobAtAda.id,
        type: 'text' as const,
        content: `fallback ${n}`,
        event: { id: `evt_fallback${n}${ada.id.slice(-6)}`, type: 'message.created', delayMs: 1000 },
      });
      // The second send reuses a stored message id: its row is refused, and with it the batch's statement.
      const results = await Promise.allSettled([
        sends.send(send(`msg_fallbackA${ada.id.slice(-8)}`, 1)),
        sends.send(send(taken.body.id, 2)),
        sends.send(send(`msg_fallbackC${ada.id.slice(-8)}`, 3)),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      // The sends of a failed batch are written alone side by side: no order among them is promised.
      const contents = await ctx.dataSource.query(`SELECT content FROM messages WHERE sender_id = $1`, [ada.id]);
      expect(contents.map((r: { content: string }) => r.content).sort()).toEqual(['already here', 'fallback 1', 'fallback 3']);
    });

    it('sends once for 30 concurrent sends with one key arriving together, and all answer the same message', async () => {
      const ada = await person();
      const bobAtAda = await ctx.make.contact(ada.id, { name: 'Bob', email: 'batch-race@medium.example' });
      const others = await Promise.all(
        Array.from({ length: 5 }, (_, i) => ctx.make.contact(ada.id, { name: `Other ${i}`, email: `batch-other-${i}@medium.example` })),
      );
      const outcomes = await Promise.all([
        ...Array.from({ length: 30 }, () => messages.send(ada.id, { recipient_id: bobAtAda.id, content: 'once' }, 'batch-race')),
        ...others.map((c, i) => messages.send(ada.id, { recipient_id: c.id, content: `other ${i}` }, `batch-other-${i}`)),
      ]);
      expect(new Set(outcomes.slice(0, 30).map((o) => o.body.id)).size).toBe(1);
      expect(outcomes.slice(0, 30).filter((o) => !o.replayed)).toHaveLength(1);
      const [{ count }] = await ctx.dataSource.query(`SELECT count(*)::int AS count FROM messages WHERE sender_id = $1`, [ada.id]);
      expect(count).toBe(6);
    });
  });

  it('reports a delivery once when 30 sockets mark it at the same moment (one statement marks them all)', async () => {
    const ada = await person();
    const bob = await person();
    const bobAtAda = await ctx.make.contact(ada.id, { name: 'Bob', email: bob.email });
    await ctx.make.contact(bob.id, { name: 'Ada', email: ada.email });
    const { body } = await messages.send(ada.id, { recipient_id: bobAtAda.id, content: 'many sockets' });
    const other = await messages.send(ada.id, { recipient_id: bobAtAda.id, content: 'another' });
    const marks = await Promise.all([
      ...Array.from({ length: 30 }, () => receipts.markDelivered(bob.id, body.id)),
      receipts.markDelivered(bob.id, other.body.id),
      receipts.markDelivered(ada.id, body.id),
    ]);
    expect(marks.slice(0, 30).filter((m) => m !== null)).toEqual([
      { message_id: body.id, sender_id: ada.id, contact_id: bobAtAda.id, at: expect.any(String) },
    ]);
    expect(marks[30]).toMatchObject({ message_id: other.body.id });
    expect(marks[31]).toBeNull();
  });
});
