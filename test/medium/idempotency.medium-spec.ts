import { ApiError } from '../../src/common/errors/api-error';
import { IdempotencyModule } from '../../src/common/idempotency/idempotency.module';
import { Idempotency, StoredResponse } from '../../src/common/idempotency/idempotency.service';
import { MediumContext, mediumContext } from './medium';

const SCOPE = 'POST /v1/medium';

describe('Idempotency (medium: real module, real database)', () => {
  let ctx: MediumContext;
  let idempotency: Idempotency;
  let owner: string;
  let keyCount = 0;
  const freshKey = () => `medium-key-${(keyCount += 1)}`;

  /** Work that counts its runs and answers 201 with the run number. */
  function counted(delayMs = 0) {
    const work = {
      runs: 0,
      fn: async (): Promise<StoredResponse> => {
        work.runs += 1;
        const run = work.runs;
        if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
        return { status: 201, body: { run } };
      },
    };
    return work;
  }

  beforeAll(async () => {
    ctx = await mediumContext([IdempotencyModule]);
    idempotency = ctx.get(Idempotency);
    owner = (await ctx.make.user()).id;
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('replays the stored first response for a retry with the same key and body, without repeating the work', async () => {
    const key = freshKey();
    const work = counted();
    const first = await idempotency.run(owner, SCOPE, key, { a: 1, b: [1, 2] }, work.fn);
    expect(first).toEqual({ status: 201, body: { run: 1 }, replayed: false });
    // The same body with its keys in another order is the same request.
    const retry = await idempotency.run(owner, SCOPE, key, { b: [1, 2], a: 1 }, work.fn);
    expect(retry).toEqual({ status: 201, body: { run: 1 }, replayed: true });
    expect(work.runs).toBe(1);
  });

  it('refuses the same key with a different body with BAD_REQUEST, leaving the first response in place', async () => {
    const key = freshKey();
    const work = counted();
    await idempotency.run(owner, SCOPE, key, { amount: 1 }, work.fn);
    const refused = await idempotency.run(owner, SCOPE, key, { amount: 2 }, work.fn).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({
      code: 'BAD_REQUEST',
      message: 'This Idempotency-Key was already used with a different request body; use a new key',
    });
    expect(work.runs).toBe(1);
    await expect(idempotency.run(owner, SCOPE, key, { amount: 1 }, work.fn)).resolves.toMatchObject({ body: { run: 1 }, replayed: true });
  });

  it('keeps keys apart by owner and by scope', async () => {
    const key = freshKey();
    const other = (await ctx.make.user()).id;
    const work = counted();
    await idempotency.run(owner, SCOPE, key, {}, work.fn);
    await expect(idempotency.run(other, SCOPE, key, {}, work.fn)).resolves.toMatchObject({ body: { run: 2 }, replayed: false });
    await expect(idempotency.run(owner, 'POST /v1/other', key, {}, work.fn)).resolves.toMatchObject({ body: { run: 3 }, replayed: false });
    expect(work.runs).toBe(3);
  });

  it('frees the key when the first attempt fails and rolls back', async () => {
    const key = freshKey();
    await expect(
      idempotency.run(owner, SCOPE, key, {}, () => Promise.reject(new ApiError('SERVICE_UNAVAILABLE', 'try again'))),
    ).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    const work = counted();
    await expect(idempotency.run(owner, SCOPE, key, {}, work.fn)).resolves.toEqual({ status: 201, body: { run: 1 }, replayed: false });
  });

  it('makes a concurrent request with the same key wait for the first and replay it', async () => {
    const key = freshKey();
    const work = counted(300);
    const [a, b] = await Promise.all([
      idempotency.run(owner, SCOPE, key, { x: 1 }, work.fn),
      idempotency.run(owner, SCOPE, key, { x: 1 }, work.fn),
    ]);
    expect(work.runs).toBe(1);
    expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
    expect(a.body).toEqual({ run: 1 });
    expect(b.body).toEqual({ run: 1 });
  });

  it('lets an expired key be used again, even with another body', async () => {
    const key = freshKey();
    const work = counted();
    await idempotency.run(owner, SCOPE, key, { v: 1 }, work.fn);
    await ctx.make.expireIdempotencyKey(owner, SCOPE, key);
    await expect(idempotency.run(owner, SCOPE, key, { v: 2 }, work.fn)).resolves.toEqual({
      status: 201,
      body: { run: 2 },
      replayed: false,
    });
    expect(await idempotency.purgeExpired()).toBe(0);
  });

  it('refuses a malformed key before doing anything', async () => {
    const work = counted();
    await expect(idempotency.run(owner, SCOPE, 'has space', {}, work.fn)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(idempotency.run(owner, SCOPE, '', {}, work.fn)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    expect(work.runs).toBe(0);
  });

  it('runs the work once in a transaction when no key is given', async () => {
    const work = counted();
    await expect(idempotency.run(owner, SCOPE, undefined, {}, work.fn)).resolves.toEqual({
      status: 201,
      body: { run: 1 },
      replayed: false,
    });
    await expect(idempotency.run(owner, SCOPE, undefined, {}, work.fn)).resolves.toEqual({
      status: 201,
      body: { run: 2 },
      replayed: false,
    });
  });
});
