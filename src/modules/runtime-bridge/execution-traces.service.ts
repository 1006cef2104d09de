import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { DomainEvents } from '../events/domain-events';
import type { ExecutionTarget } from '../marketplace/installs.service';
import { ExecutionTracesRepository } from './execution-traces.repository';
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

  constructor(
    private readonly traces: ExecutionTracesRepository,
    private readonly events: DomainEvents,
  ) {}

  /**
   * Records a trace of a read (state, history, a cache hit) without holding
   * its answer: the caller does not wait for the statement. The answer does
   * not depend on it, and what a trace records (and its `capability.invoked`
   * event) can then only be lost together with this process, by a crash
   * between the answer and the statement's commit (a graceful stop waits for
   * the writes in flight). Actions, confirmations and failures are recorded
   * before their answer, as before. A failed write is logged, never thrown.
   */
  recordAfterAnswer(input: TraceInput): void {
    const write: Promise<void> = this.record(input)
      .catch((error: unknown) => this.logger.error({ err: error, requestId: input.requestId }, 'execution trace not recorded'))
      .finally(() => this.writing.delete(write));
    this.writing.add(write);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([...this.writing]);
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
    if (input.outcome === 'cached' || input.outcome === 'pending') return this.traces.insert(trace);
    const common = {
      capability_name: input.capability,
      mode: input.mode,
      user_id: target.user_id,
      install_id: target.install_id,
      request_id: input.requestId,
      duration_ms: durationMs,
    };
    const event = {
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
    await this.traces.insert(trace, (first) => this.events.inStatement(event, first));
  }
}
