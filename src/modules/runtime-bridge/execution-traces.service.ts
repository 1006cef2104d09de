import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { newId } from '../../common/ids';
import { DomainEvents } from '../events/domain-events';
import type { ExecutionTarget } from '../marketplace/installs.service';
import { ExecutionTracesRepository, NewTrace, TraceEvent } from './execution-traces.repository';
import { CapabilityMode } from '@soul-service/rules';

export const CAPABILITY_EVENTS = { invoked: 'capability.invoked', failed: 'capability.failed' } as const;

/** The four phases of the execution lifecycle, in order (see docs/runtime-bridge.md). */
export const PHASES = ['accept', 'resolve', 'invoke', 'deliver'] as const;
export type Phase = (typeof PHASES)[number];

/** Times each phase of one execution; what the trace stores. */
export class PhaseClock {
  readonly started = Date.now();
  readonly phases: Partial<Record<Phase, number>> = {};
  private current: { phase: Phase; at: number } | null = null;

  /** Starts timing `phase`, ending the current one; entering the phase already timed changes nothing. */
  enter(phase: Phase): void {
    if (this.current?.phase === phase) return;
    this.close();
    this.current = { phase, at: performance.now() };
  }

  close(): void {
    if (this.current) this.phases[this.current.phase] = Math.round((performance.now() - this.current.at) * 100) / 100;
    this.current = null;
  }

  get elapsedMs(): number {
    return Date.now() - this.started;
  }
}

export interface TraceInput {
  requestId: string;
  target: ExecutionTarget;
  capability: string;
  mode: CapabilityMode;
  trigger: 'api' | 'confirmation' | 'poll' | 'stream';
  outcome: 'ok' | 'degraded' | 'cached' | 'pending' | 'failed';
  clock: PhaseClock;
  attempts: number;
  error?: { code: string; message: string; retriesExhausted: boolean };
}

/** How long execution traces are kept for the delivery log and debugging. */
export const TRACE_RETENTION_DAYS = 30;
/** A read's trace waits at most this long for others to be written with it (`recordAfterAnswer`). */
export const TRACE_FLUSH_MS = 10;
/** Traces written in one statement at most; a full batch is written at once. */
export const TRACE_BATCH = 200;

/**
 * Execution traces (`req_` ids) and the `capability.invoked` / `capability.failed`
 * domain events, written in one transaction so an event exists exactly when
 * its trace does. Cache hits and pending confirmations are traced but emit no
 * event: the runtime was not invoked.
 */
@Injectable()
export class ExecutionTraces implements BeforeApplicationShutdown {
  private readonly logger = new Logger(ExecutionTraces.name);
  /** Traces being written after their answer was sent (`recordAfterAnswer`); a shutdown waits for them. */
  private readonly writing = new Set<Promise<void>>();
  /** Reads' traces waiting for the next batch statement, and the timer that writes it. */
  private batch: Array<{ trace: NewTrace; event?: TraceEvent }> = [];
  private flushTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly traces: ExecutionTracesRepository,
    private readonly events: DomainEvents,
  ) {}

  /**
   * Records a trace of a read (state, history, a cache hit) without holding
   * its answer: the caller does not wait for the statement. The answer does
   * not depend on it, and what a trace records (and its `capability.invoked`
   * event) can then only be lost together with this process, by a crash
   * between the answer and the statement's commit (a graceful stop writes
   * what waits and waits for the writes in flight). The traces of the reads
   * answered within `TRACE_FLUSH_MS` of each other are written together, in
   * one statement (`ExecutionTracesRepository.insertMany`), and their events
   * reach the dispatcher as one batch. Actions, confirmations and failures
   * are recorded before their answer, one by one, as before. A failed write
   * is logged, never thrown.
   */
  recordAfterAnswer(input: TraceInput): void {
    this.batch.push(this.rowOf(input));
    if (this.batch.length >= TRACE_BATCH) this.flush();
    else this.flushTimer ??= setTimeout(() => this.flush(), TRACE_FLUSH_MS);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.flush();
    await Promise.all([...this.writing]);
  }

  /** Writes the traces waiting for a batch, in one statement. */
  private flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (this.batch.length === 0) return;
    const rows = this.batch;
    this.batch = [];
    const write: Promise<void> = this.traces
      .insertMany(rows)
      .catch((error: unknown) =>
        this.logger.error(
          { err: error, requestIds: rows.map((row) => row.trace.requestId) },
          `${rows.length} execution traces not recorded`,
        ),
      )
      .finally(() => this.writing.delete(write));
    this.writing.add(write);
  }

  /** Drops traces older than `TRACE_RETENTION_DAYS` in small batches (retention job). */
  purgeOld(): Promise<number> {
    return this.traces.purgeOlderThan(TRACE_RETENTION_DAYS);
  }

  /**
   * One statement: the trace row and, when the runtime was invoked, its event.
   * Only action traces wait for the commit to reach disk; the others commit
   * asynchronously (`synchronous_commit` off for this transaction alone): they
   * are visible to everyone at once and stay atomic, but a PostgreSQL crash may
   * lose the last fraction of a second of them (see docs/decisions.md).
   */
  async record(input: TraceInput): Promise<void> {
    const { trace, event } = this.rowOf(input);
    if (!event) return this.traces.insert(trace);
    await this.traces.insert(trace, (first) => this.events.inStatement(event, first));
  }

  /** The trace row of an execution and, when the runtime was invoked, its event. */
  private rowOf(input: TraceInput): { trace: NewTrace; event?: TraceEvent } {
    input.clock.close();
    const durationMs = input.clock.elapsedMs;
    const { target } = input;
    const trace = {
      requestId: input.requestId,
      installId: target.install_id,
      userId: target.user_id,
      appId: target.app_id,
      packageId: target.package_id,
      capability: input.capability,
      mode: input.mode,
      trigger: input.trigger,
      outcome: input.outcome,
      errorCode: input.error?.code ?? null,
      errorMessage: input.error?.message ?? null,
      attempts: input.attempts,
      retriesExhausted: input.error?.retriesExhausted ?? false,
      phases: input.clock.phases,
      durationMs,
      durable: input.mode === 'action',
    };
    // Cache hits and pending confirmations invoked no runtime: no event.
    if (input.outcome === 'cached' || input.outcome === 'pending') return { trace };
    const common = {
      capability_name: input.capability,
      mode: input.mode,
      user_id: target.user_id,
      install_id: target.install_id,
      request_id: input.requestId,
      duration_ms: durationMs,
    };
    const event = {
      id: newId('evt'),
      type: input.error ? CAPABILITY_EVENTS.failed : CAPABILITY_EVENTS.invoked,
      payload: {
        app_id: target.app_id,
        // Beside `data` (which is the webhook body as the spec lists it): the package the delivery log shows.
        package_id: target.package_id,
        data: input.error
          ? {
              ...common,
              error_code: input.error.code,
              error_message: input.error.message,
              retries_exhausted: input.error.retriesExhausted,
            }
          : { ...common, status: input.outcome },
      },
    };
    return { trace, event };
  }
}
