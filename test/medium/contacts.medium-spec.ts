import { ApiError } from '../../src/common/errors/api-error';
import { newId } from '../../src/common/ids';
import { ContactsModule } from '../../src/modules/contacts/contacts.module';
import { ContactsService } from '../../src/modules/contacts/contacts.service';
import { GroupsService } from '../../src/modules/contacts/groups.service';
import { MediumContext, mediumContext } from './medium';

const page = { limit: 20, offset: 0 };

/** What a refused call threw, for matching its code and message. */
async function refusal(call: Promise<unknown>): Promise<ApiError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('ContactsService and GroupsService (medium: real module, real database)', () => {
  let ctx: MediumContext;
  let contacts: ContactsService;
  let groups: GroupsService;

  beforeAll(async () => {
    ctx = await mediumContext([ContactsModule]);
    contacts = ctx.get(ContactsService);
    groups = ctx.get(GroupsService);
  });

  afterAll(async () => {
    await ctx?.close();
  });

  describe('ownership', () => {
    it("answers another user's contact exactly like an unknown one, for reading, changing and deleting", async () => {
      const owner = await ctx.make.user();
      const stranger = await ctx.make.user();
      const { id } = await ctx.make.contact(owner.id, { name: 'Private' });

      const unknown = await refusal(contacts.get(stranger.id, newId('con')));
      for (const call of [
        () => contacts.get(stranger.id, id),
        () => contacts.update(stranger.id, id, { name: 'Taken' }),
        () => contacts.remove(stranger.id, id),
      ]) {
        const error = await refusal(call());
        expect(error.code).toBe('NOT_FOUND');
        expect(error.status).toBe(unknown.status);
        expect(error.message).toBe(`No contact ${id}`);
      }
      expect((await contacts.get(owner.id, id)).name).toBe('Private');
      expect((await contacts.list(stranger.id, page)).total).toBe(0);
    });

    it('refuses a second contact with the same address (any case) for one owner, but not for another owner', async () => {
      const owner = await ctx.make.user();
      const other = await ctx.make.user();
      await contacts.create(owner.id, { name: 'Ada', email: 'ada@example.com' });
      const error = await refusal(contacts.create(owner.id, { name: 'Ada again', email: 'ADA@example.com' }));
      expect(error.code).toBe('BAD_REQUEST');
      expect(error.message).toBe('email ADA@example.com already belongs to another of your contacts');
      await expect(contacts.create(other.id, { name: 'Ada', email: 'ada@example.com' })).resolves.toMatchObject({ name: 'Ada' });
    });

    it("refuses a group holding another user's contact, naming it, and creates nothing", async () => {
      const owner = await ctx.make.user();
      const stranger = await ctx.make.user();
      const mine = await ctx.make.contact(owner.id, { name: 'Mine' });
      const theirs = await ctx.make.contact(stranger.id, { name: 'Theirs' });
      const ghost = newId('con');

      const one = await refusal(groups.create(owner.id, { name: 'Mixed', member_ids: [mine.id, theirs.id] }));
      expect(one.code).toBe('BAD_REQUEST');
      expect(one.message).toBe(`member_ids: ${theirs.id} is not one of your contacts`);
      const two = await refusal(groups.create(owner.id, { name: 'Mixed', member_ids: [theirs.id, mine.id, ghost] }));
      expect(two.message).toBe(`member_ids: ${theirs.id}, ${ghost} are not your contacts`);
      expect((await groups.list(owner.id, page)).total).toBe(0);

      const group = await groups.create(owner.id, { name: 'Mine only', member_ids: [mine.id] });
      expect(group.member_ids).toEqual([mine.id]);
      expect(await groups.owns(owner.id, group.id)).toBe(true);
      expect(await groups.owns(stranger.id, group.id)).toBe(false);
      expect((await refusal(groups.get(stranger.id, group.id))).code).toBe('NOT_FOUND');
    });

    it('takes a deleted contact out of its groups', async () => {
      const owner = await ctx.make.user();
      const stays = await ctx.make.contact(owner.id, { name: 'Stays' });
      const leaves = await ctx.make.contact(owner.id, { name: 'Leaves' });
      const group = await groups.create(owner.id, { name: 'Two', member_ids: [stays.id, leaves.id] });
      await contacts.remove(owner.id, leaves.id);
      expect((await groups.get(owner.id, group.id)).member_ids).toEqual([stays.id]);
    });
  });

  describe('relationship score', () => {
    it.each([
      { what: 'no message yet', weight: undefined, weightAgo: undefined, score: 0 },
      { what: 'one message today', weight: 1, weightAgo: '0 seconds', score: 18.1 },
      { what: 'five messages today', weight: 5, weightAgo: '0 seconds', score: 63.2 },
      { what: 'one message 30 days ago (decayed by e)', weight: 1, weightAgo: '30 days', score: 7.1 },
      { what: 'a century of silence (no underflow)', weight: 50, weightAgo: '100 years', score: 0 },
    ])('scores $what as $score', async ({ weight, weightAgo, score }) => {
      const owner = await ctx.make.user();
      const { id } = await ctx.make.contact(owner.id, { weight, weightAgo });
      expect((await contacts.get(owner.id, id)).relationship_score).toBe(score);
    });

    it('lists contacts by score, highest first, then by name', async () => {
      const owner = await ctx.make.user();
      await ctx.make.contact(owner.id, { name: 'bea', weight: 1, weightAgo: '30 days' });
      await ctx.make.contact(owner.id, { name: 'Cleo', weight: 5 });
      await ctx.make.contact(owner.id, { name: 'Abe' });
      await ctx.make.contact(owner.id, { name: 'Ann' });
      const list = await contacts.list(owner.id, page);
      expect(list.contacts.map((c) => [c.name, c.relationship_score])).toEqual([
        ['Cleo', 63.2],
        ['bea', 7.1],
        ['Abe', 0],
        ['Ann', 0],
      ]);
      expect(list.total).toBe(4);
    });
  });

  describe('connections', () => {
    it('connects two users only once each has added the address the other verified', async () => {
      const ada = await ctx.make.user({ verifiedEmail: 'ada.medium@example.com' });
      const bob = await ctx.make.user({ verifiedEmail: 'bob.medium@example.com' });
      const bobAtAda = await contacts.create(ada.id, { name: 'Bob', email: 'Bob.Medium@example.com' });
      expect(bobAtAda.connected).toBe(false);
      expect(await contacts.mutualLinks(ada.id)).toEqual([]);

      await contacts.create(bob.id, { name: 'Ada', email: 'ada.medium@example.com' });
      expect((await contacts.get(ada.id, bobAtAda.id)).connected).toBe(true);
      expect(await contacts.mutualLinks(ada.id)).toEqual([expect.objectContaining({ userId: bob.id })]);
    });
  });
});
