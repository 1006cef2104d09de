import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { PgListener } from '../../infra/database/pg-listener';
import { ConcurrentRuns } from '../../infra/queue/concurrent-runs';
import { BackboneMetrics } from '../../infra/metrics/backbone-metrics';
import { DomainEvent } from './domain-event';
import { ClaimedEvent, EVENTS_CHANNEL, EventsRepository } from './events.repository';
import { DOMAIN_EVENT_SUBSCRIBER } from './on-domain-event.decorator';

type Subscriber = {
  name: string;
  type: string;
  handle: (events: DomainEvent[], manager: EntityManager) => Promise<void> | void;
};

const MAX_RETRY_DELAY_MS = 10 * 60_000;
/**
 * A drain that found nothing more due asks when the next held-back or retried
 * event is due at most this often. The exact wake-ups come from elsewhere (a
 * hold's NOTIFY payload, this process's own retry timers); the question only
 * catches holds and retries whose wake-up this process missed (another
 * worker's retry, a listener reconnecting), so it need not cost a statement
 * per batch.
 */
const NEXT_DUE_CHECK_EVERY_MS = 1_000;
/** Due times this close share one wake-up, at the later of them. */
const WAKE_GRANULARITY_MS = 50;
/** Future wake-ups kept at most; beyond them the next-due check and the sweep still find every due event. */
const MAX_WAKE_TIMES = 256;

/**
 * Worker-role dispatcher of the domain event outbox. Several drains per
 * worker (`EVENT_DRAINS`), and any number of workers, claim disjoint batches
 * with `FOR UPDATE SKIP LOCKED`; each batch is handed to every subscriber at
 * once (set-based work) and marked dispatched in the same transaction, so each
 * committed event reaches its subscribers exactly once. When a batch fails,
 * it rolls back and its events are handed over one by one, each in its own
 * transaction: the failing event is retried alone with backoff and never
 * holds the others back.
 *
 * Ordering: none across events. Drains run concurrently, so two events may
 * reach their subscribers in either order (as Stripe and Svix say of
 * webhooks); a subscriber that needs order reads it from the payload.
 */
@Injectable()
export class EventDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(EventDispatcher.name);
  private readonly subscribers: Subscriber[] = [];
  private readonly listener: PgListener;
  private readonly drains: ConcurrentRuns;
  private sweepTimer: NodeJS.Timeout | null = null;
  /** Due times to wake at (ms since the epoch), earliest first, and the timer armed for the earliest. */
  private readonly wakeTimes: number[] = [];
  private wakeTimer: { at: number; timer: NodeJS.Timeout } | null = null;
  private nextDueCheckedAt = 0;
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: EventsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly metrics: BackboneMetrics,
  ) {
    this.drains = new ConcurrentRuns(
      () => this.drain(),
      () => this.config.backbone.eventDrains,
      (error) => this.logger.error({ err: error }, 'event dispatch failed'),
    );
    this.listener = new PgListener(config.databaseUrl, EVENTS_CHANNEL, (payload) => this.onNotification(payload), this.logger);
  }

  async onApplicationBootstrap(): Promise<void> {
    this.discoverSubscribers();
    await this.listener.start();
    // Safety net only: NOTIFY wakes the dispatcher on every commit, retry timers when a failed event is due.
    this.sweepTimer = setInterval(() => this.wake(), this.config.eventSweepIntervalMs);
    this.sweepTimer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.wakeTimer) clearTimeout(this.wakeTimer.timer);
    await this.drains.stop();
    await this.listener.stop();
  }

  /** Starts drains up to `EVENT_DRAINS`; a wake while all run makes them go round again. */
  wake(): void {
    this.drains.wake();
  }

  /**
   * Wakes when a held-back or failed event becomes due. Every due time is
   * kept, not only the earliest: the api announces holds as they are written
   * (at most every 250 ms, `DomainEvents.wakeAfterHold`), and keeping only the
   * earliest drained a second's worth of held events in one wave when the
   * next-due check came round (docs/performance.md, "Issue 16: the gateway at
   * its target rate").
   */
  private wakeAt(at: number): void {
    if (this.stopped) return;
    const times = this.wakeTimes;
    let index = times.findIndex((t) => t > at - WAKE_GRANULARITY_MS);
    if (index === -1) index = times.length;
    else if (times[index] < at + WAKE_GRANULARITY_MS) {
      // A wake-up that close is already set: one wake-up serves both if it comes at the later of the two. Moved later,
      // it must not pass the next ones, or the list would no longer be in order: those up to `at` merge into it.
      while (index + 1 < times.length && times[index + 1] <= at) times.splice(index, 1);
      if (at > times[index]) times[index] = at;
      return this.armWakeTimer();
    }
    if (index >= MAX_WAKE_TIMES) return;
    times.splice(index, 0, at);
    if (times.length > MAX_WAKE_TIMES) times.pop();
    this.armWakeTimer();
  }

  /** Arms the timer for the earliest due time (re-arming it if that came earlier than the armed one). */
  private armWakeTimer(): void {
    const next = this.wakeTimes[0];
    if (next === undefined || this.stopped || (this.wakeTimer && this.wakeTimer.at <= next)) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer.timer);
    const timer = setTimeout(
      () => {
        this.wakeTimer = null;
        // Only the due times that have come: a later one, however close, keeps its own wake-up.
        const now = Date.now();
        while (this.wakeTimes.length > 0 && this.wakeTimes[0] <= now) this.wakeTimes.shift();
        this.wake();
        this.armWakeTimer();
      },
      Math.max(0, next - Date.now()) + 20,
    );
    timer.unref();
    this.wakeTimer = { at: next, timer };
  }

  /** A commit recorded events: drain now, or, for an event held back on purpose (payload: its hold in ms), when it is due. */
  private onNotification(payload?: string): void {
    const holdMs = Number(payload);
    if (Number.isFinite(holdMs) && holdMs > 0) this.wakeAt(Date.now() + holdMs);
    else this.wake();
  }

  /** Claims batches while full ones come back; a full batch starts another drain beside this one. */
  private async drain(): Promise<void> {
    const size = this.config.backbone.eventBatchSize;
    for (;;) {
      if (this.stopped) return;
      const { claimed, nextDueInMs } = await this.dispatchBatch(size);
      if (claimed < size) {
        // Nothing more is due: be back when the next held-back or retried event is.
        if (nextDueInMs !== null) this.wakeAt(Date.now() + Math.max(0, nextDueInMs));
        return;
      }
      if (this.drains.hasRoom) this.wake();
    }
  }

  /**
   * One batch in one transaction: the claim marks the events dispatched, the
   * subscribers do their work, and the commit makes both true at once (no
   * savepoint on this path). When a subscriber throws, the whole transaction
   * rolls back and the batch's events are dispatched again one by one, each in
   * a transaction of its own, so the failing ones are found and put off with
   * backoff while the others go through.
   */
  private async dispatchBatch(size: number): Promise<{ claimed: number; nextDueInMs: number | null }> {
    let nextDueInMs: number | null = null;
    let rows: ClaimedEvent[] = [];
    try {
      await this.dataSource.transaction(async (manager) => {
        rows = await this.events.claimDue(manager, size);
        if (rows.length < size && Date.now() - this.nextDueCheckedAt >= NEXT_DUE_CHECK_EVERY_MS) {
          this.nextDueCheckedAt = Date.now();
          nextDueInMs = await this.events.nextDueInMs(manager);
        }
        if (rows.length > 0) await this.handOver(rows, manager);
      });
    } catch (error) {
      if (rows.length === 0) throw error; // the claim itself failed: nothing was handed over
      this.logger.warn({ err: error, events: rows.length }, 'event batch failed; dispatching its events one by one');
      for (const row of rows) await this.dispatchOne(row.id);
      return { claimed: rows.length, nextDueInMs };
    }
    this.metrics.eventsDispatched(rows.length);
    return { claimed: rows.length, nextDueInMs };
  }

  /** One event of a failed batch in its own transaction; a failure holds it back with backoff. */
  private async dispatchOne(id: string): Promise<void> {
    const tried: { event: ClaimedEvent | null } = { event: null };
    try {
      await this.dataSource.transaction(async (manager) => {
        tried.event = await this.events.claimOne(manager, id);
        if (tried.event) await this.handOver([tried.event], manager);
      });
      if (tried.event) this.metrics.eventsDispatched(1);
    } catch (error) {
      const event = tried.event;
      if (!event) throw error; // the claim itself failed: the event stays due
      // The claim rolled back with the work; `attempts` had counted this one.
      const attemptsBefore = event.attempts - 1;
      const delay = retryDelay(attemptsBefore);
      const message = errorMessage(error);
      await this.events.postpone(event.id, message.slice(0, 2000), delay);
      this.metrics.eventDispatchFailures(1);
      this.logger.warn(
        { eventId: event.id, type: event.type, attempt: attemptsBefore + 1, delayMs: delay },
        `subscriber failed: ${message}`,
      );
      this.wakeAt(Date.now() + delay);
    }
  }

  /** Every subscriber gets the batch's events of its type, in claim order, in this transaction. */
  private async handOver(rows: ClaimedEvent[], manager: EntityManager): Promise<void> {
    const events: DomainEvent[] = rows.map((row) => ({ id: row.id, type: row.type, payload: row.payload, createdAt: row.createdAt }));
    for (const subscriber of this.subscribers) {
      const mine = subscriber.type === '*' ? events : events.filter((event) => event.type === subscriber.type);
      if (mine.length > 0) await subscriber.handle(mine, manager);
    }
  }

  private discoverSubscribers(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const handler = instance[method];
        if (typeof handler !== 'function') continue;
        const type = this.reflector.get<string | undefined>(DOMAIN_EVENT_SUBSCRIBER, handler as () => void);
        if (!type) continue;
        this.subscribers.push({
          name: `${wrapper.name as string}.${method}`,
          type,
          handle: (handler as Subscriber['handle']).bind(instance),
        });
      }
    }
    // Specific subscribers first, then those of every type.
    this.subscribers.sort((a, b) => Number(a.type === '*') - Number(b.type === '*'));
    const names = this.subscribers.map((s) => `${s.type} → ${s.name}`);
    this.logger.log(`domain event subscribers: ${names.length ? names.join('; ') : 'none'}`);
  }
}

/** Backoff of a failing event: 1 s, doubling per attempt, at most ten minutes. */
function retryDelay(attemptsBefore: number): number {
  return Math.min(1000 * 2 ** attemptsBefore, MAX_RETRY_DELAY_MS);
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
