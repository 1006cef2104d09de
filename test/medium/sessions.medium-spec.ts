import { AccessModule } from '../../src/modules/access/access.module';
import { Sessions } from '../../src/modules/access/sessions.service';
import { SessionsRepository } from '../../src/modules/access/sessions.repository';
import { newId } from '../../src/common/ids';
import { MediumContext, mediumContext } from './medium';

describe('Sessions.check (medium: real module, real database)', () => {
  let ctx: MediumContext;
  let sessions: Sessions;

  /** A session row of `userId`, as a login leaves it, with what the test changes on it. */
  async function session(
    userId: string,
    state: { revoked?: boolean; expired?: boolean; lastUsedMinutesAgo?: number } = {},
  ): Promise<string> {
    const id = newId('ses');
    await ctx.dataSource.query(
      `INSERT INTO sessions (id, user_id, expires_at, revoked_at, last_used_at)
       VALUES ($1, $2, now() + make_interval(hours => $3), CASE WHEN $4 THEN now() END, now() - make_interval(mins => $5))`,
      [id, userId, state.expired ? -1 : 1, state.revoked ?? false, state.lastUsedMinutesAgo ?? 0],
    );
    return id;
  }

  const lastUsed = async (id: string): Promise<Date> => {
    const [row] = await ctx.dataSource.query<Array<{ last_used_at: Date }>>(`SELECT last_used_at FROM sessions WHERE id = $1`, [id]);
    return row.last_used_at;
  };

  beforeAll(async () => {
    ctx = await mediumContext([AccessModule]);
    sessions = ctx.get(Sessions);
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('answers many checks asked at once with one statement, each with its own session', async () => {
    const ada = await ctx.make.user({ name: 'Ada' });
    const bob = await ctx.make.user({ name: 'Bob', tier: 'pro' });
    const adaLive = await session(ada.id);
    const bobLive = await session(bob.id);
    const revoked = await session(ada.id, { revoked: true });
    const expired = await session(bob.id, { expired: true });
    const statements = jest.spyOn(ctx.get(SessionsRepository), 'findLiveMany');
    try {
      const asked = [
        ...Array.from({ length: 10 }, () => [ada.id, adaLive]),
        [bob.id, bobLive],
        [ada.id, revoked],
        [bob.id, expired],
        // Bob's live session asked for as Ada's: a check answers for the user it was made for only.
        [ada.id, bobLive],
        [ada.id, 'ses_unknown'],
      ];
      const answers = await Promise.all(asked.map(([userId, sessionId]) => sessions.check(userId, sessionId)));

      expect(statements).toHaveBeenCalledTimes(1);
      for (const answer of answers.slice(0, 10))
        expect(answer?.user).toMatchObject({ id: ada.id, sessionId: adaLive, tier: 'free', profile: { name: 'Ada' } });
      expect(answers[10]?.user).toMatchObject({ id: bob.id, sessionId: bobLive, tier: 'pro', profile: { name: 'Bob' } });
      expect(answers.slice(11)).toEqual([null, null, null, null]);
    } finally {
      statements.mockRestore();
    }
  });

  it('moves last_used_at of a session unused for over a minute, and leaves a recent one alone', async () => {
    const ada = await ctx.make.user();
    const stale = await session(ada.id, { lastUsedMinutesAgo: 5 });
    const recent = await session(ada.id, { lastUsedMinutesAgo: 0 });
    const [staleBefore, recentBefore] = [await lastUsed(stale), await lastUsed(recent)];

    await Promise.all([sessions.check(ada.id, stale), sessions.check(ada.id, recent)]);

    expect((await lastUsed(stale)).getTime()).toBeGreaterThan(staleBefore.getTime() + 4 * 60_000);
    expect(await lastUsed(recent)).toEqual(recentBefore);
  });

  it('does not wait for a session row another transaction holds: the check answers, and leaves its time alone', async () => {
    const ada = await ctx.make.user();
    const held = await session(ada.id, { lastUsedMinutesAgo: 5 });
    const before = await lastUsed(held);
    const runner = ctx.dataSource.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    try {
      await runner.query(`SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE`, [held]);
      let timer: NodeJS.Timeout | undefined;
      const answer = await Promise.race([
        sessions.check(ada.id, held),
        new Promise((resolve) => (timer = setTimeout(() => resolve('still waiting'), 5_000))),
      ]);
      clearTimeout(timer);
      expect(answer).toMatchObject({ user: { id: ada.id, sessionId: held } });
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
    expect(await lastUsed(held)).toEqual(before);
  });
});
