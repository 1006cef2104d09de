import { Logger } from '@nestjs/common';
import { Client } from 'pg';
import { Loaded, NotifiedCache } from '../../src/infra/database/notified-cache';
import { TestEnvironment } from '../support/harness';
import { waitFor } from '../support/wait-for';

/**
 * NotifiedCache on a real PostgreSQL listener: what is answered from memory,
 * when it is read again, and that a background reload never outlives a
 * change. The TTL is short (2 s) so an entry reaches its reload point
 * (60–80 % of it) within a test.
 */
const TTL_MS = 2_000;
const CHANNEL = 'notified_cache_test';

describe('NotifiedCache', () => {
  let env: TestEnvironment;
  let cache: NotifiedCache<{ version: number }>;
  let notifier: Client;

  beforeAll(async () => {
    env = await TestEnvironment.create();
    notifier = new Client({ connectionString: env.env.DATABASE_URL });
    await notifier.connect();
  });

  beforeEach(async () => {
    cache = new NotifiedCache({ databaseUrl: env.env.DATABASE_URL, channel: CHANNEL, ttlMs: TTL_MS, max: 100, logger: new Logger('test') });
    cache.listen();
    await waitFor(() => cache.remembering || undefined, { what: 'the cache listening' });
  });

  afterEach(() => cache.stop());

  afterAll(async () => {
    await notifier.end();
    await env.close();
  });

  /** A loader answering the current `version` (null once `gone`), counting its calls; `gate` holds the next call until released. */
  function source() {
    const state = { version: 1, gone: false, calls: 0, gate: null as Promise<void> | null };
    const load = async (): Promise<Loaded<{ version: number }> | null> => {
      state.calls += 1;
      const version = state.version;
      const gone = state.gone;
      const gate = state.gate;
      state.gate = null; // one call is held, not every later one
      if (gate) await gate;
      return gone ? null : { value: { version } };
    };
    return { state, load };
  }

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('answers from memory within the first part of the TTL without reading again', async () => {
    const { state, load } = source();
    expect(await cache.get('k', 'owner', load)).toEqual({ version: 1 });
    state.version = 2;
    expect(await cache.get('k', 'owner', load)).toEqual({ version: 1 });
    expect(state.calls).toBe(1);
  });

  it('past its reload point answers from memory at once and reloads once in the background; the next lookup sees the reload', async () => {
    const { state, load } = source();
    await cache.get('k', 'owner', load);
    state.version = 2;
    await sleep(TTL_MS * 0.82);
    let release!: () => void;
    state.gate = new Promise<void>((resolve) => (release = resolve));
    // Three lookups while the reload is held: all answered from memory, one reload.
    expect(await cache.get('k', 'owner', load)).toEqual({ version: 1 });
    expect(await cache.get('k', 'owner', load)).toEqual({ version: 1 });
    expect(await cache.get('k', 'owner', load)).toEqual({ version: 1 });
    expect(state.calls).toBe(2);
    release();
    await waitFor(async () => ((await cache.get('k', 'owner', load))?.version === 2 ? true : undefined), { what: 'the reloaded entry' });
    expect(state.calls).toBe(2);
  });

  it('never answers from memory past the TTL, whether or not it was looked up', async () => {
    const { state, load } = source();
    await cache.get('k', 'owner', load);
    state.version = 2;
    await sleep(TTL_MS + 50);
    expect(await cache.get('k', 'owner', load)).toEqual({ version: 2 });
    expect(state.calls).toBe(2);
  });

  it('drops the entry when a background reload finds nothing (the TTL is the safety net for a missed notification)', async () => {
    const { state, load } = source();
    await cache.get('k', 'owner', load);
    state.gone = true;
    await sleep(TTL_MS * 0.82);
    expect(await cache.get('k', 'owner', load)).toEqual({ version: 1 }); // still within its TTL: the reload starts
    await waitFor(() => (state.calls === 2 ? true : undefined), { what: 'the reload' });
    await sleep(10);
    expect(await cache.get('k', 'owner', load)).toBeNull();
    expect(state.calls).toBe(3);
  });

  it('does not store a background reload that began before a change was announced', async () => {
    const { state, load } = source();
    await cache.get('k', 'owner', load);
    await sleep(TTL_MS * 0.82);
    let release!: () => void;
    state.gate = new Promise<void>((resolve) => (release = resolve));
    await cache.get('k', 'owner', load); // the reload starts, reads version 1 and is held
    expect(state.calls).toBe(2);
    state.version = 2;
    await notifier.query(`SELECT pg_notify($1, $2)`, [CHANNEL, 'owner']);
    // The notification drops the entry: a lookup reads again (version 2) and stores it.
    await waitFor(async () => ((await cache.get('k', 'owner', load))?.version === 2 ? true : undefined), { what: 'the notification' });
    const calls = state.calls;
    release(); // the held reload answers version 1, read before the change
    await sleep(20);
    expect(await cache.get('k', 'owner', load)).toEqual({ version: 2 });
    expect(state.calls).toBe(calls);
  });
});
