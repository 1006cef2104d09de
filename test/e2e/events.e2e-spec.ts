import { Injectable, Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { DomainEvent, DomainEvents } from '../../src/modules/events/domain-events';
import { OnDomainEvents } from '../../src/modules/events/on-domain-event.decorator';
import { TestEnvironment } from '../support/harness';
import { waitFor } from '../support/wait-for';

/** Events seen by subscribers, shared by the in-process workers of a test. */
const seen: Array<{ id: string }> = [];
/** While true, the `probe.flaky` subscriber fails every event it is handed. */
let flakyDown = false;

@Injectable()
class CountingSubscriber {
  @OnDomainEvents('probe.counted')
  async count(events: DomainEvent[], manager: EntityManager): Promise<void> {
    // A write through the dispatcher's transaction commits with the dispatch.
    await manager.query(`SELECT 1`);
    for (const event of events) seen.push({ id: event.id });
  }

  @OnDomainEvents('probe.flaky')
  flaky(events: DomainEvent[]): void {
    if (flakyDown) throw new Error('subscriber is down for a moment');
    for (const event of events) seen.push({ id: event.id });
  }
}

@Module({ providers: [CountingSubscriber] })
class CountingModule {}

describe('domain events (transactional outbox)', () => {
  let env: TestEnvironment;
  let dataSource: DataSource;
  let events: DomainEvents;

  beforeAll(async () => {
    env = await TestEnvironment.create();
    const { app } = await env.startApi();
    dataSource = app.get(getDataSourceToken());
    events = app.get(DomainEvents);
  });
  afterAll(() => env.close());
  beforeEach(() => (seen.length = 0));

  const record = (type: string, payload: Record<string, unknown> = {}) =>
    dataSource.transaction((manager) => events.record(manager, { type, payload }));

  it('refuses to record outside a transaction', async () => {
    await expect(events.record(dataSource.manager, { type: 'probe.counted', payload: {} })).rejects.toThrow(/inside a transaction/);
  });

  it('never dispatches an event whose transaction rolled back; dispatches a committed one exactly once across two workers', async () => {
    // A ten-minute safety sweep: every dispatch below must come from NOTIFY or a retry timer.
    const env_ = { EVENT_SWEEP_INTERVAL_MS: '600000' };
    await env.startWorker({ imports: [CountingModule], env: env_ });
    await env.startWorker({ imports: [CountingModule], env: env_ });

    let rolledBackId = '';
    await expect(
      dataSource.transaction(async (manager) => {
        rolledBackId = (await events.record(manager, { type: 'probe.counted', payload: { n: -1 } })).id;
        throw new Error('abort the change');
      }),
    ).rejects.toThrow('abort the change');

    const committed: string[] = [];
    await Promise.all(
      Array.from({ length: 200 }, async (_, n) => {
        committed.push((await record('probe.counted', { n })).id);
      }),
    );

    await waitFor(() => seen.length >= committed.length, { what: 'all committed events to be dispatched' });
    // Give a duplicate, if the dispatcher could produce one, time to show up.
    await new Promise((r) => setTimeout(r, 300));

    const ids = seen.map((s) => s.id);
    expect(ids.sort()).toEqual([...committed].sort());
    expect(new Set(ids).size).toBe(committed.length);
    expect(ids).not.toContain(rolledBackId);
    const [{ count }] = await dataSource.query(`SELECT count(*)::int AS count FROM events WHERE id = $1`, [rolledBackId]);
    expect(count).toBe(0);
    const [{ pending }] = await dataSource.query(`SELECT count(*)::int AS pending FROM events WHERE dispatched_at IS NULL`);
    expect(pending).toBe(0);
  });

  it('records many events in one statement (recordMany): each dispatched once when committed, none when rolled back', async () => {
    await expect(
      dataSource.transaction(async (manager) => {
        await events.recordMany(manager, [{ type: 'probe.counted', payload: { n: -2 } }]);
        throw new Error('abort the bulk change');
      }),
    ).rejects.toThrow('abort the bulk change');
    const recorded = await dataSource.transaction((manager) =>
      events.recordMany(
        manager,
        Array.from({ length: 50 }, (_, n) => ({ type: 'probe.counted', payload: { n } })),
      ),
    );
    expect(recorded.map((e) => e.payload.n)).toEqual(Array.from({ length: 50 }, (_, n) => n));
    expect(recorded.every((e) => e.createdAt instanceof Date && e.id.startsWith('evt_'))).toBe(true);
    const ids = new Set(recorded.map((e) => e.id));
    await waitFor(() => seen.filter((s) => ids.has(s.id)).length >= 50, { what: 'the bulk-recorded events to be dispatched' });
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.filter((s) => ids.has(s.id))).toHaveLength(50);
    const [{ n }] = await dataSource.query(`SELECT count(*)::int AS n FROM events WHERE payload->>'n' = '-2'`);
    expect(n).toBe(0);
  });

  it('wakes the dispatcher on commit instead of waiting for the periodic sweep', async () => {
    // The workers sweep every ten minutes, so only the NOTIFY sent at commit can deliver this in time.
    const { id } = await record('probe.counted');
    await waitFor(() => seen.some((s) => s.id === id), { timeoutMs: 20_000, intervalMs: 5, what: 'the notified dispatch' });
  });

  it('dispatches every held-back event when it falls due, not only the earliest one announced', async () => {
    // Three holds announced 300 ms apart, as the api announces them (DomainEvents.wakeAfterHold). The workers sweep
    // every ten minutes and ask for the next due event at most once a second, so each event is on time only if the
    // dispatcher kept every announced wake-up.
    await env.startWorker({ imports: [CountingModule], env: { EVENT_SWEEP_INTERVAL_MS: '600000' } });
    const HOLD_MS = 1_000;
    const held: Array<{ id: string; dueAt: number }> = [];
    for (let n = 0; n < 3; n++) {
      if (n > 0) await new Promise((r) => setTimeout(r, 300));
      const { id } = await dataSource.transaction((manager) =>
        events.record(manager, { type: 'probe.counted', payload: { held: n }, delayMs: HOLD_MS }),
      );
      held.push({ id, dueAt: Date.now() + HOLD_MS });
      await events.wakeAfterHold(HOLD_MS);
    }
    const seenAt = new Map<string, number>();
    await waitFor(
      () => {
        for (const { id } of held) if (!seenAt.has(id) && seen.some((s) => s.id === id)) seenAt.set(id, Date.now());
        return seenAt.size === held.length || undefined;
      },
      { timeoutMs: 20_000, intervalMs: 10, what: 'the held-back events' },
    );
    for (const { id, dueAt } of held) {
      const late = seenAt.get(id)! - dueAt;
      expect(late).toBeGreaterThan(-200); // held back (the hold started at its insert, a moment before dueAt was taken)
      expect(late).toBeLessThan(2_000);
    }
  });

  it('isolates a failing event of a batch: the others go through, it alone is held back and retried later', async () => {
    // Committed together, so a drain claims both in one batch: the batch fails and rolls back, its events are then
    // dispatched one by one, and the flaky one fails again and is held back with backoff. Another drain may claim
    // the failed batch's events between that rollback and the single tries: whichever then holds the flaky event
    // holds it back, and a failed batch is never counted as an attempt.
    flakyDown = true;
    const [flaky, other] = await dataSource.transaction(async (manager) => [
      await events.record(manager, { type: 'probe.flaky', payload: {} }),
      await events.record(manager, { type: 'probe.counted', payload: {} }),
    ]);
    await waitFor(() => seen.some((s) => s.id === other.id), { what: 'the healthy event' });
    const heldBack = await waitFor(
      async () => {
        const [row] = await dataSource.query(`SELECT attempts, last_error, dispatched_at FROM events WHERE id = $1`, [flaky.id]);
        return row.last_error ? row : undefined;
      },
      { what: 'the flaky event to be held back' },
    );
    expect(heldBack).toMatchObject({ last_error: 'subscriber is down for a moment', dispatched_at: null });
    // One attempt, or more if its 1 s backoff already ran out on a slow machine: a failed batch counts none.
    expect(heldBack.attempts).toBeGreaterThanOrEqual(1);
    expect(seen.some((s) => s.id === flaky.id)).toBe(false);
    flakyDown = false;
    // The retry is due after 1 s of backoff; the dispatcher's retry timer (not the sweep) picks it up.
    await waitFor(() => seen.some((s) => s.id === flaky.id), { timeoutMs: 20_000, what: 'the retried event' });
    const [after] = await dataSource.query(`SELECT attempts, last_error, dispatched_at FROM events WHERE id = $1`, [flaky.id]);
    expect(after).toMatchObject({ last_error: null, dispatched_at: expect.any(Date) });
    expect(after.attempts).toBeGreaterThanOrEqual(2);
  });
});
