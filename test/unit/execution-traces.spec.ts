import { Logger } from '@nestjs/common';
import type { DomainEvents } from '../../src/modules/events/domain-events';
import type { ExecutionTarget } from '../../src/modules/marketplace/installs.service';
import type { ExecutionTracesRepository, NewTrace, TraceEvent } from '../../src/modules/runtime-bridge/execution-traces.repository';
import {
  ExecutionTraces,
  PhaseClock,
  TRACE_BATCH,
  TRACE_FLUSH_MS,
  TraceInput,
} from '../../src/modules/runtime-bridge/execution-traces.service';

type Row = { trace: NewTrace; event?: TraceEvent };

/**
 * `recordAfterAnswer`: the write runs after the answer, the reads answered
 * close together are written in one statement, a graceful stop writes what
 * waits and waits for the writes still in flight, and a failed write is
 * logged, never thrown. The repository is a stand-in whose statements the
 * test completes by hand (the statement itself is covered by the bridge e2e
 * tests).
 */
describe('ExecutionTraces.recordAfterAnswer', () => {
  /** A repository whose batch inserts wait until the test settles them. */
  function heldRepository() {
    const held: Array<{ rows: Row[]; settle: (error?: Error) => void }> = [];
    const repository = {
      insertMany: (rows: Row[]) =>
        new Promise<void>((resolve, reject) => held.push({ rows, settle: (error) => (error ? reject(error) : resolve()) })),
    } as unknown as ExecutionTracesRepository;
    return { repository, held };
  }
  const events = { inStatement: () => ({}) } as unknown as DomainEvents;
  const target = { install_id: 'ins_1', user_id: 'usr_1', app_id: 'app_1', package_id: 'pkg_1' } as ExecutionTarget;
  const read = (requestId: string, outcome: TraceInput['outcome'] = 'cached'): TraceInput => ({
    requestId,
    target,
    capability: 'balance',
    mode: 'state',
    trigger: 'api',
    outcome,
    clock: new PhaseClock(),
    attempts: outcome === 'cached' ? 0 : 1,
  });
  /** Whether a promise has settled after the microtasks and timers queued so far ran. */
  const settledSoon = async (promise: Promise<unknown>) => {
    let settled = false;
    void promise.then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((resolve) => setImmediate(resolve));
    return settled;
  };
  const afterFlush = () => new Promise((resolve) => setTimeout(resolve, TRACE_FLUSH_MS + 20));

  afterEach(() => jest.restoreAllMocks());

  it('does not hold the caller, and writes the reads answered together in one statement once the flush delay passed', async () => {
    const { repository, held } = heldRepository();
    const traces = new ExecutionTraces(repository, events);

    expect(traces.recordAfterAnswer(read('req_a'))).toBeUndefined();
    traces.recordAfterAnswer(read('req_b', 'ok'));
    expect(held).toHaveLength(0);
    await afterFlush();
    expect(held.map((h) => h.rows.map((r) => r.trace.requestId))).toEqual([['req_a', 'req_b']]);
    held[0].settle();

    traces.recordAfterAnswer(read('req_c'));
    await afterFlush();
    expect(held.map((h) => h.rows.map((r) => r.trace.requestId))).toEqual([['req_a', 'req_b'], ['req_c']]);
    held[1].settle();
    await traces.beforeApplicationShutdown();
  });

  it('writes a full batch at once, without waiting for the flush delay', async () => {
    const { repository, held } = heldRepository();
    const traces = new ExecutionTraces(repository, events);
    for (let i = 0; i < TRACE_BATCH + 1; i += 1) traces.recordAfterAnswer(read(`req_${i}`));
    expect(held).toHaveLength(1);
    expect(held[0].rows).toHaveLength(TRACE_BATCH);
    const stopping = traces.beforeApplicationShutdown();
    expect(held[1].rows.map((r) => r.trace.requestId)).toEqual([`req_${TRACE_BATCH}`]);
    held.forEach((h) => h.settle());
    await stopping;
  });

  it('on a graceful stop writes what waits at once, and waits for every write in flight', async () => {
    const { repository, held } = heldRepository();
    const traces = new ExecutionTraces(repository, events);

    traces.recordAfterAnswer(read('req_a'));
    await afterFlush();
    traces.recordAfterAnswer(read('req_b'));
    const stopping = traces.beforeApplicationShutdown();
    expect(held.map((h) => h.rows.map((r) => r.trace.requestId))).toEqual([['req_a'], ['req_b']]);
    expect(await settledSoon(stopping)).toBe(false);
    held[0].settle();
    expect(await settledSoon(stopping)).toBe(false);
    held[1].settle();
    expect(await settledSoon(stopping)).toBe(true);
  });

  it('logs a failed write with its request ids, throws nothing, and no longer waits for it at shutdown', async () => {
    const { repository, held } = heldRepository();
    const traces = new ExecutionTraces(repository, events);
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);

    traces.recordAfterAnswer(read('req_failing'));
    traces.recordAfterAnswer(read('req_with_it'));
    await afterFlush();
    held[0].settle(new Error('connection terminated'));
    await new Promise((resolve) => setImmediate(resolve));

    expect(logged).toHaveBeenCalledTimes(1);
    const [fields, message] = logged.mock.calls[0] as [Record<string, unknown>, string];
    expect(message).toBe('2 execution traces not recorded');
    expect(fields.requestIds).toEqual(['req_failing', 'req_with_it']);
    expect((fields.err as Error).message).toBe('connection terminated');
    // Nothing left in flight: a stop does not wait for the failed write.
    expect(await settledSoon(traces.beforeApplicationShutdown())).toBe(true);
  });

  it('writes what the read was: the request, its install and outcome, an event when the runtime answered, none for a cache hit', async () => {
    const { repository, held } = heldRepository();
    const traces = new ExecutionTraces(repository, events);

    traces.recordAfterAnswer(read('req_c'));
    traces.recordAfterAnswer(read('req_d', 'ok'));
    const stopping = traces.beforeApplicationShutdown();
    const [hit, call] = held[0].rows;
    expect(hit.trace).toMatchObject({
      requestId: 'req_c',
      installId: 'ins_1',
      appId: 'app_1',
      packageId: 'pkg_1',
      outcome: 'cached',
      mode: 'state',
      durable: false,
    });
    expect(hit.event).toBeUndefined();
    expect(call.event).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'capability.invoked',
      payload: {
        app_id: 'app_1',
        package_id: 'pkg_1',
        data: expect.objectContaining({ request_id: 'req_d', install_id: 'ins_1', status: 'ok', mode: 'state' }),
      },
    });
    held[0].settle();
    await stopping;
  });
});
