import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { defineRuntime, IdempotencyStore, MemoryIdempotencyStore, RedisIdempotencyStore, Runtime, RuntimeError } from '../src';
import { RuntimeTestKit } from '../src/testing';
import { bank } from './bank';
import { post, serve } from './serve';

const input = { toAccount: 'DE89370400440532013000', amount: 25, currency: 'EUR' };

/**
 * Action idempotency (spec, rule 3): the same X-Service-Idempotency-Key and
 * input answer the stored answer without acting again; the same key with other
 * input is 409 CONFLICT. Run with the memory store and with the real Redis on
 * 127.0.0.1:6379 (a random key prefix, removed afterwards), two runtime
 * instances sharing it as a deployment would.
 */
describe.each([
  [
    'memory',
    (): { store: IdempotencyStore; close: () => Promise<void> } => ({ store: new MemoryIdempotencyStore(), close: async () => undefined }),
  ],
  [
    'redis',
    (): { store: IdempotencyStore; close: () => Promise<void>; keys: () => Promise<string[]> } => {
      const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
      const prefix = `sdk_t_${randomBytes(4).toString('hex')}:`;
      return {
        store: new RedisIdempotencyStore(redis, { prefix }),
        close: async () => {
          const keys = await redis.keys(`${prefix}*`);
          if (keys.length > 0) await redis.del(...keys);
          redis.disconnect();
        },
        keys: () => redis.keys(`${prefix}*`),
      };
    },
  ],
] as const)('action idempotency with the %s store', (_name, makeStore) => {
  let kit: RuntimeTestKit;
  let store: { store: IdempotencyStore; close: () => Promise<void>; keys?: () => Promise<string[]> };
  let instances: Array<{ runtime: Runtime<typeof bank>; url: string; close: () => Promise<void> }>;
  let transfers: Array<Record<string, unknown>>;
  let failNext: RuntimeError | Error | undefined;

  const runtimeOn = async () => {
    const runtime = defineRuntime({
      descriptor: bank,
      serviceUrl: kit.serviceUrl,
      appId: kit.appId,
      keys: kit.jwks,
      idempotency: { store: store.store },
      onError: () => undefined,
      handlers: {
        balance: async () => ({ data: { available: 1, currency: 'EUR' } }),
        transfer: async (given) => {
          if (failNext) {
            const error = failNext;
            failNext = undefined;
            throw error;
          }
          transfers.push(given);
          return { result: { transferId: `tr_${transfers.length}`, state: 'completed' }, message: 'Sent.' };
        },
        transactions: async () => ({ items: [] }),
        ticker: () => undefined,
      },
    });
    const server = await serve(runtime.listener());
    return { runtime, ...server };
  };
  const act = async (instance: number, key: string, given: Record<string, unknown>, installId?: string) =>
    post(
      `${instances[instance].url}/capabilities/transfer/execute`,
      await kit.headers('action', { idempotencyKey: key, installId }),
      kit.body('transfer', 'action', { input: given }),
    );

  beforeAll(async () => {
    kit = await RuntimeTestKit.create();
    store = makeStore();
    instances = [await runtimeOn(), await runtimeOn()];
  });
  afterAll(async () => {
    for (const instance of instances) await instance.close();
    await store.close();
  });
  beforeEach(() => {
    transfers = [];
    failNext = undefined;
  });

  it('answers a repeated key with the same input with the stored answer, acting once, on any instance', async () => {
    const key = `idem_${randomBytes(6).toString('hex')}`;
    const first = await act(0, key, input);
    expect(first).toMatchObject({ status: 200, body: { status: 'ok', result: { transferId: 'tr_1' }, message: 'Sent.' } });
    const again = await act(0, key, { currency: 'EUR', amount: 25, toAccount: input.toAccount });
    const elsewhere = await act(1, key, input);
    expect(again.body).toEqual(first.body);
    expect(elsewhere.body).toEqual(first.body);
    expect(transfers).toHaveLength(1);
  });

  it('answers the same key with other input 409 CONFLICT, without acting', async () => {
    const key = `idem_${randomBytes(6).toString('hex')}`;
    await act(0, key, input);
    const conflict = await act(1, key, { ...input, amount: 26 });
    expect(conflict).toMatchObject({ status: 409, body: { status: 'error', error: { code: 'CONFLICT', retryable: false } } });
    expect(transfers).toHaveLength(1);
  });

  it('keeps keys of different installs apart', async () => {
    const key = `idem_${randomBytes(6).toString('hex')}`;
    await act(0, key, input, 'inst_one00000000000000000000');
    const other = await act(0, key, { ...input, amount: 30 }, 'inst_two00000000000000000000');
    expect(other.status).toBe(200);
    expect(transfers).toHaveLength(2);
  });

  it('frees the key after a retryable failure, and keeps a final refusal', async () => {
    const retried = `idem_${randomBytes(6).toString('hex')}`;
    failNext = new RuntimeError('UPSTREAM_UNAVAILABLE', 'the bank is down');
    expect((await act(0, retried, input)).status).toBe(503);
    expect((await act(0, retried, input)).status).toBe(200);
    expect(transfers).toHaveLength(1);

    const refused = `idem_${randomBytes(6).toString('hex')}`;
    failNext = new RuntimeError('PERMISSION_DENIED', 'the account is frozen');
    expect((await act(0, refused, input)).status).toBe(403);
    const replayed = await act(1, refused, input);
    expect(replayed).toMatchObject({ status: 403, body: { error: { code: 'PERMISSION_DENIED', message: 'the account is frozen' } } });
    expect(transfers).toHaveLength(1);
  });

  it('refuses an action call without X-Service-Idempotency-Key and checks input before the key is claimed', async () => {
    const headers = await kit.headers('action', { headers: { 'x-service-idempotency-key': '' } });
    const missing = await post(`${instances[0].url}/capabilities/transfer/execute`, headers, kit.body('transfer', 'action', { input }));
    expect(missing).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS', field: 'X-Service-Idempotency-Key' } } });
    const key = `idem_${randomBytes(6).toString('hex')}`;
    const invalid = await act(0, key, { ...input, amount: 0 });
    expect(invalid).toMatchObject({ status: 400, body: { error: { code: 'INVALID_PARAMS', field: 'input.amount' } } });
    expect((await act(0, key, input)).status).toBe(200);
  });

  it('answers a key whose first call is still running as retryable, never running the action twice at once', async () => {
    const key = `idem_${randomBytes(6).toString('hex')}`;
    const [a, b] = await Promise.all([act(0, key, input), act(1, key, input)]);
    const statuses = [a.status, b.status].sort();
    expect(transfers).toHaveLength(1);
    // Either the second call saw the first running (429, retryAfter 1) or it came after the answer (200, replayed).
    if (statuses[1] === 429) expect((a.status === 429 ? a : b).body.error).toMatchObject({ code: 'RATE_LIMITED', retryAfter: 1 });
    else expect(b.body).toEqual(a.body);
  });

  if (_name === 'redis') {
    it('stores each key under its prefix with an expiry (SET NX PX)', async () => {
      await act(0, `idem_${randomBytes(6).toString('hex')}`, input);
      expect((await store.keys!()).length).toBeGreaterThan(0);
    });
  }
});

describe('MemoryIdempotencyStore', () => {
  it('forgets a key after its TTL and drops the oldest past maxEntries', async () => {
    let now = 1_000;
    const store = new MemoryIdempotencyStore({ maxEntries: 2, now: () => now });
    expect(await store.claim('a', 'f1', 100)).toBeNull();
    expect(await store.claim('a', 'f2', 100)).toEqual({ fingerprint: 'f1' });
    now += 101;
    expect(await store.claim('a', 'f2', 100)).toBeNull();
    await store.claim('b', 'f', 100);
    await store.claim('c', 'f', 100);
    expect(await store.claim('a', 'f3', 100)).toBeNull();
  });
});
