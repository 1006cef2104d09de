import { ApiError } from '../../src/common/errors/api-error';
import { ContactsModule } from '../../src/modules/contacts/contacts.module';
import { ContactsService } from '../../src/modules/contacts/contacts.service';
import { MessageReceipts } from '../../src/modules/messages/message-receipts.service';
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
});
