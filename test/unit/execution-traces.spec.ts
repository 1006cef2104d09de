import { Logger } from '@nestjs/common';
import type { DomainEvents } from '../../src/modules/events/domain-events';
import type { ExecutionTarget } from '../../src/modules/marketplace/installs.service';
import type { ExecutionTracesRepository, NewTrace } from '../../src/modules/runtime-bridge/execution-traces.repository';
import { ExecutionTraces, PhaseClock, TraceInput } from '../../src/modules/runtime-bridge/execution-traces.service';

/**
 * `recordAfterAnswer`: the write runs after the answer, a graceful stop waits
 * for the writes still in flight, and a failed write is logged, never thrown.
 * The repository is a stand-in whose statement the test completes by hand
 * (the statement itself is covered by the bridge e2e tests).
 */
describe('ExecutionTraces.recordAfterAnswer', () => {
  /** A repository whose inserts wait until the test settles them. */
  function heldRepository() {
    const held: Array<{ trace: NewTrace; settle: (error?: Error) => void }> = [];
    const repository = {
      insert: (trace: NewTrace) =>
        new Promise<void>((resolve, reject) => held.push({ trace, settle: (error) => (error ? reject(error) : resolve()) })),
    } as unknown as ExecutionTracesRepository;
    return { repository, held };
  }
  const events = { inStatement: () => ({}) } as unknown as DomainEvents;
  const target = { install_id: 'ins_1', user_id: 'usr_1', app_id: 'app_1', package_id: 'pkg_1' } as ExecutionTarget;
  const read = (requestId: string): TraceInput => ({
    requestId,
    target,
    capability: 'balance',
    mode: 'state',
    trigger: 'api',
    outcome: 'cached',
    clock: new PhaseClock(),
    attempts: 0,
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

  afterEach(() => jest.restoreAllMocks());

  it('does not hold the caller, and a graceful stop waits for every write in flight', async () => {
    const { repository, held } = heldRepository();
    const traces = new ExecutionTraces(repository, events);

    expect(traces.recordAfterAnswer(read('req_a'))).toBeUndefined();
    traces.recordAfterAnswer(read('req_b'));
    expect(held.map((h) => h.trace.requestId)).toEqual(['req_a', 'req_b']);

    const stopping = traces.beforeApplicationShutdown();
    expect(await settledSoon(stopping)).toBe(false);
    held[0].settle();
    expect(await settledSoon(stopping)).toBe(false);
    held[1].settle();
    expect(await settledSoon(stopping)).toBe(true);
  });

  it('logs a failed write with its request id, throws nothing, and no longer waits for it at shutdown', async () => {
    const { repository, held } = heldRepository();
    const traces = new ExecutionTraces(repository, events);
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);

    traces.recordAfterAnswer(read('req_failing'));
    held[0].settle(new Error('connection terminated'));
    await new Promise((resolve) => setImmediate(resolve));

    expect(logged).toHaveBeenCalledTimes(1);
    const [fields, message] = logged.mock.calls[0] as [Record<string, unknown>, string];
    expect(message).toBe('execution trace not recorded');
    expect(fields.requestId).toBe('req_failing');
    expect((fields.err as Error).message).toBe('connection terminated');
    // Nothing left in flight: a stop does not wait for the failed write.
    expect(await settledSoon(traces.beforeApplicationShutdown())).toBe(true);
  });

  it('writes what the read was: the request, its install and outcome, with no event for a cache hit', async () => {
    const { repository, held } = heldRepository();
    const inStatement = jest.fn();
    const traces = new ExecutionTraces(repository, { inStatement } as unknown as DomainEvents);

    traces.recordAfterAnswer(read('req_c'));
    expect(held[0].trace).toMatchObject({
      requestId: 'req_c',
      installId: 'ins_1',
      appId: 'app_1',
      packageId: 'pkg_1',
      outcome: 'cached',
      mode: 'state',
      durable: false,
    });
    expect(inStatement).not.toHaveBeenCalled();
    held[0].settle();
    await traces.beforeApplicationShutdown();
  });
});
