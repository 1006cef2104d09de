import { randomBytes } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../src/common/errors/api-error';
import { Idempotency, StoredResponse } from '../../src/common/idempotency/idempotency.service';
import { requestHash } from '../../src/common/idempotency/idempotency-key';

/**
 * `Idempotency.run` against the real PostgreSQL on 127.0.0.1:5432 (database
 * `test`), in a schema of this file's own holding the `idempotency_keys` table
 * as migration 1764000100000-UserApi creates it; the schema is dropped afterwards.
 */
const SCHEMA = `mut_${Date.now()}_${randomBytes(4).toString('hex')}`;
/** Schemas of runs that ended before their afterAll (StrykerJS ends a run that times out) are dropped after an hour. */
const STALE_AFTER_MS = 3_600_000;
const OWNER = 'usr_1';
const SCOPE = 'messages.send';

let dataSource: DataSource;
let idempotency: Idempotency;
let n = 0;
const freshKey = () => `key-${++n}-${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  // The `test` database is made on first use (a new machine has only `postgres`).
  const admin = new DataSource({ type: 'postgres', url: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.initialize();
  const [exists] = await admin.query(`SELECT 1 FROM pg_database WHERE datname = 'test'`);
  if (!exists) {
    await admin.query('CREATE DATABASE test').catch((error: { code?: string }) => {
      if (error.code !== '42P04') throw error; // created meanwhile by another test file
    });
  }
  await admin.destroy();
  dataSource = new DataSource({
    type: 'postgres',
    url: 'postgres://postgres@127.0.0.1:5432/test',
    extra: { options: `-c search_path=${SCHEMA}`, max: 4 },
  });
  await dataSource.initialize();
  const schemas: Array<{ name: string }> = await dataSource.query(
    `SELECT nspname AS name FROM pg_namespace WHERE nspname ~ '^mut_[0-9]+_[0-9a-f]+$'`,
  );
  for (const { name } of schemas) {
    if (Number(name.split('_')[1]) < Date.now() - STALE_AFTER_MS) await dataSource.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
  }
  await dataSource.query(`CREATE SCHEMA ${SCHEMA}`);
  // The DDL of migration 1764000100000-UserApi.
  await dataSource.query(`
      CREATE TABLE idempotency_keys (
        owner_id         text NOT NULL,
        scope            text NOT NULL,
        key              text NOT NULL,
        request_hash     text NOT NULL,
        response_status  integer NOT NULL,
        response_body    jsonb NOT NULL,
        created_at       timestamptz NOT NULL DEFAULT now(),
        expires_at       timestamptz NOT NULL,
        PRIMARY KEY (owner_id, scope, key)
      )`);
  await dataSource.query(`CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at)`);
  idempotency = new Idempotency(dataSource);
});

afterAll(async () => {
  await dataSource.query(`DROP SCHEMA ${SCHEMA} CASCADE`);
  await dataSource.destroy();
});

/** Work that records each run and answers `response`. */
function work(response: StoredResponse = { status: 201, body: { id: 'msg_1', to: ['con_1'] } }) {
  /** Whether each run was inside a transaction. */
  const runs: boolean[] = [];
  const fn = async (manager: EntityManager) => {
    runs.push(manager.queryRunner?.isTransactionActive === true);
    return response;
  };
  return Object.assign(fn, { runs });
}

/** Polls every 5 ms until `condition` holds; fails after 2 s. */
async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met within 2 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const row = async (key: string, owner = OWNER, scope = SCOPE) => {
  const [found] = await dataSource.query(
    `SELECT request_hash, response_status, response_body, EXTRACT(EPOCH FROM expires_at - created_at)::int AS lifetime, expires_at > now() AS live
       FROM idempotency_keys WHERE owner_id = $1 AND scope = $2 AND key = $3`,
    [owner, scope, key],
  );
  return found as { request_hash: string; response_status: number; response_body: unknown; lifetime: number; live: boolean } | undefined;
};

describe('Idempotency.run (PostgreSQL)', () => {
  it('runs the work in a transaction and stores nothing without a key', async () => {
    const job = work();
    const before = Number((await dataSource.query(`SELECT count(*) AS c FROM idempotency_keys`))[0].c);
    const result = await idempotency.run(OWNER, SCOPE, undefined, { text: 'hi' }, job);
    expect(result).toEqual({ status: 201, body: { id: 'msg_1', to: ['con_1'] }, replayed: false });
    expect(job.runs).toEqual([true]);
    expect(Number((await dataSource.query(`SELECT count(*) AS c FROM idempotency_keys`))[0].c)).toBe(before);
  });

  it('runs the work once, in the transaction of the key row, and stores its response for 24 hours', async () => {
    const key = freshKey();
    const job = work();
    const result = await idempotency.run(OWNER, SCOPE, key, { text: 'hi' }, job);
    expect(result).toEqual({ status: 201, body: { id: 'msg_1', to: ['con_1'] }, replayed: false });
    expect(job.runs).toEqual([true]);
    expect(await row(key)).toEqual({
      request_hash: requestHash({ text: 'hi' }),
      response_status: 201,
      response_body: { id: 'msg_1', to: ['con_1'] },
      lifetime: 86_400,
      live: true,
    });
  });

  it('replays the stored response with replayed=true for the same key and body, without running the work again', async () => {
    const key = freshKey();
    await idempotency.run(OWNER, SCOPE, key, { text: 'hi', to: ['con_1'] }, work({ status: 202, body: { id: 'msg_7', n: 1 } }));
    const retry = work({ status: 500, body: 'must not run' });
    const replay = await idempotency.run(OWNER, SCOPE, key, { to: ['con_1'], text: 'hi' }, retry);
    expect(replay).toEqual({ status: 202, body: { id: 'msg_7', n: 1 }, replayed: true });
    expect(retry.runs).toHaveLength(0);
  });

  it('replays a stored null body as null', async () => {
    const key = freshKey();
    await idempotency.run(OWNER, SCOPE, key, {}, work({ status: 204, body: null }));
    expect(await idempotency.run(OWNER, SCOPE, key, {}, work())).toEqual({ status: 204, body: null, replayed: true });
  });

  it('refuses the same key with a different body with BAD_REQUEST, without running the work', async () => {
    const key = freshKey();
    await idempotency.run(OWNER, SCOPE, key, { text: 'hi' }, work());
    const other = work();
    const error = await idempotency.run(OWNER, SCOPE, key, { text: 'hello' }, other).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      code: 'BAD_REQUEST',
      status: 400,
      message: 'This Idempotency-Key was already used with a different request body; use a new key',
    });
    expect(other.runs).toHaveLength(0);
    expect((await row(key))?.request_hash).toBe(requestHash({ text: 'hi' }));
  });

  it('keeps keys apart per owner and per scope', async () => {
    const key = freshKey();
    await idempotency.run(OWNER, SCOPE, key, { text: 'hi' }, work());
    const otherOwner = work({ status: 201, body: 'other owner' });
    const otherScope = work({ status: 201, body: 'other scope' });
    expect(await idempotency.run('usr_2', SCOPE, key, { text: 'different' }, otherOwner)).toEqual({
      status: 201,
      body: 'other owner',
      replayed: false,
    });
    expect(await idempotency.run(OWNER, 'agents.execute', key, { text: 'different' }, otherScope)).toEqual({
      status: 201,
      body: 'other scope',
      replayed: false,
    });
    expect(otherOwner.runs).toHaveLength(1);
    expect(otherScope.runs).toHaveLength(1);
  });

  it('rolls back a failed attempt with its key row, so the key is free again', async () => {
    const key = freshKey();
    const failure = new Error('runtime unavailable');
    const failing = async (manager: EntityManager) => {
      await manager.query(
        `INSERT INTO idempotency_keys (owner_id, scope, key, request_hash, response_status, response_body, expires_at)
                           VALUES ('witness', 'w', $1, 'h', 1, '1', now() + interval '1 hour')`,
        [key],
      );
      throw failure;
    };
    await expect(idempotency.run(OWNER, SCOPE, key, { text: 'hi' }, failing)).rejects.toBe(failure);
    expect(await row(key)).toBeUndefined();
    expect(await row(key, 'witness', 'w')).toBeUndefined();
    const retry = work();
    expect(await idempotency.run(OWNER, SCOPE, key, { text: 'other body after the failure' }, retry)).toMatchObject({ replayed: false });
    expect(retry.runs).toHaveLength(1);
  });

  it('lets an expired key be used again, with a new body, and stores the new response', async () => {
    const key = freshKey();
    await idempotency.run(OWNER, SCOPE, key, { text: 'old' }, work({ status: 201, body: 'old' }));
    await dataSource.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [key]);
    const again = work({ status: 202, body: 'new' });
    expect(await idempotency.run(OWNER, SCOPE, key, { text: 'new' }, again)).toEqual({ status: 202, body: 'new', replayed: false });
    expect(again.runs).toHaveLength(1);
    expect(await row(key)).toEqual({
      request_hash: requestHash({ text: 'new' }),
      response_status: 202,
      response_body: 'new',
      lifetime: 86_400,
      live: true,
    });
  });

  it('does not reuse a key that has not expired yet', async () => {
    const key = freshKey();
    await idempotency.run(OWNER, SCOPE, key, { text: 'hi' }, work({ status: 201, body: 'first' }));
    await dataSource.query(`UPDATE idempotency_keys SET expires_at = now() + interval '2 seconds' WHERE key = $1`, [key]);
    expect(await idempotency.run(OWNER, SCOPE, key, { text: 'hi' }, work())).toEqual({ status: 201, body: 'first', replayed: true });
  });

  it.each([
    ['an empty key', ''],
    ['a key with a space', 'a b'],
    ['a 256-character key', 'k'.repeat(256)],
  ])('refuses %s with BAD_REQUEST before any work', async (_name, key) => {
    const job = work();
    const error = await idempotency.run(OWNER, SCOPE, key, {}, job).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'BAD_REQUEST', message: 'Idempotency-Key must be 1 to 255 visible ASCII characters' });
    expect(job.runs).toHaveLength(0);
  });

  it('runs the work once when two requests with the same key arrive together; the second replays the first', async () => {
    const key = freshKey();
    let runs = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = async (): Promise<StoredResponse> => {
      runs++;
      await held;
      return { status: 201, body: { id: `msg_${runs}` } };
    };
    const first = idempotency.run(OWNER, SCOPE, key, { text: 'hi' }, slow);
    // Let the first claim the key, then start the second while the first still holds it.
    await waitFor(() => runs > 0);
    const second = idempotency.run(OWNER, SCOPE, key, { text: 'hi' }, slow);
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    const results = await Promise.all([first, second]);
    expect(runs).toBe(1);
    expect(results).toEqual([
      { status: 201, body: { id: 'msg_1' }, replayed: false },
      { status: 201, body: { id: 'msg_1' }, replayed: true },
    ]);
  });

  it('gives the key to a waiting request when the first attempt fails', async () => {
    const key = freshKey();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    const failing = async (): Promise<StoredResponse> => {
      started = true;
      await held;
      throw new Error('failed');
    };
    const first = idempotency.run(OWNER, SCOPE, key, { text: 'hi' }, failing).catch((e: unknown) => e);
    await waitFor(() => started);
    const retry = work({ status: 201, body: 'second' });
    const second = idempotency.run(OWNER, SCOPE, key, { text: 'hi' }, retry);
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    expect(await first).toBeInstanceOf(Error);
    expect(await second).toEqual({ status: 201, body: 'second', replayed: false });
    expect(retry.runs).toHaveLength(1);
  });

  describe('purgeExpired', () => {
    it('deletes only expired keys and reports how many', async () => {
      const [live, expired] = [freshKey(), freshKey()];
      await idempotency.run('usr_purge', SCOPE, live, {}, work());
      await idempotency.run('usr_purge', SCOPE, expired, {}, work());
      await dataSource.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE key = $1`, [expired]);
      const others = Number((await dataSource.query(`SELECT count(*) AS c FROM idempotency_keys WHERE expires_at < now()`))[0].c);
      expect(await idempotency.purgeExpired()).toBe(others);
      expect(await row(live, 'usr_purge')).toBeDefined();
      expect(await row(expired, 'usr_purge')).toBeUndefined();
    });
  });
});
