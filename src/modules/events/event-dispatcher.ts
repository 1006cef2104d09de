import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { Client } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { DomainEvent, EVENTS_CHANNEL } from './domain-events';
import { DOMAIN_EVENT_SUBSCRIBER } from './on-domain-event.decorator';

/** What a subscriber may ask of the dispatch it runs in. */
export interface DispatchContext {
  /**
   * Runs `task` once the dispatching transaction has committed, and only if
   * this event's subscribers succeeded: for work that must see the rows a
   * subscriber wrote (a queue job reading its delivery row). A crash between
   * commit and task loses the task, so the work it starts needs its own
   * sweep for rows left without it.
   */
  afterCommit(task: () => Promise<unknown>): void;
}

type Subscriber = {
  name: string;
  handle: (event: DomainEvent, manager: EntityManager, context: DispatchContext) => Promise<void> | void;
};

const BATCH_SIZE = 100;
const MAX_RETRY_DELAY_MS = 10 * 60_000;

/**
 * Worker-role dispatcher of the transactional outbox. Rows are claimed with
 * `FOR UPDATE SKIP LOCKED` and marked dispatched in the same transaction that
 * runs the subscribers, so with any number of workers each committed event is
 * handed to its subscribers exactly once (a failing event is rolled back to a
 * savepoint and retried later with backoff; it never blocks the others).
 */
@Injectable()
export class EventDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(EventDispatcher.name);
  private readonly subscribers = new Map<string, Subscriber[]>();
  private listener: Client | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private retryTimer: { at: number; timer: NodeJS.Timeout } | null = null;
  private draining: Promise<void> | null = null;
  private wakeAgain = false;
  private stopped = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.discoverSubscribers();
    await this.listen();
    // Safety net only: NOTIFY wakes the dispatcher on every commit, retry timers when a failed event is due.
    this.sweepTimer = setInterval(() => this.wake(), this.config.eventSweepIntervalMs);
    this.sweepTimer.unref();
    this.wake();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer.timer);
    await this.draining;
    await this.listener?.end().catch(() => undefined);
  }

  /** Subscribers for an event type, specific ones first. */
  subscribersOf(type: string): Subscriber[] {
    return [...(this.subscribers.get(type) ?? []), ...(this.subscribers.get('*') ?? [])];
  }

  /** Starts a drain now, or right after the one in progress. */
  wake(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.wakeAgain = true;
      return;
    }
    this.draining = this.drain()
      .catch((error: unknown) => this.logger.error({ err: error }, 'event dispatch failed'))
      .finally(() => {
        this.draining = null;
        if (this.wakeAgain) {
          this.wakeAgain = false;
          this.wake();
        }
      });
  }

  /** Wakes when a failed event becomes due again (the earliest one wins). */
  private wakeAt(at: number): void {
    if (this.stopped || (this.retryTimer && this.retryTimer.at <= at)) return;
    if (this.retryTimer) clearTimeout(this.retryTimer.timer);
    const timer = setTimeout(
      () => {
        this.retryTimer = null;
        this.wake();
      },
      Math.max(0, at - Date.now()) + 20,
    );
    timer.unref();
    this.retryTimer = { at, timer };
  }

  private async drain(): Promise<void> {
    while (!this.stopped && (await this.dispatchBatch()) === BATCH_SIZE) {
      /* keep going while full batches come back */
    }
  }

  private async dispatchBatch(): Promise<number> {
    const afterCommit: Array<() => Promise<unknown>> = [];
    const claimed = await this.dataSource.transaction(async (manager) => {
      const rows: Array<{ id: string; type: string; payload: Record<string, unknown>; created_at: Date; attempts: number }> =
        await manager.query(
          `SELECT id, type, payload, created_at, attempts FROM events
            WHERE dispatched_at IS NULL AND available_at <= now()
            ORDER BY created_at, id
            LIMIT $1
            FOR UPDATE SKIP LOCKED`,
          [BATCH_SIZE],
        );
      const dispatched: string[] = [];
      for (const row of rows) {
        const event: DomainEvent = { id: row.id, type: row.type, payload: row.payload, createdAt: row.created_at };
        const tasks: Array<() => Promise<unknown>> = [];
        const context: DispatchContext = { afterCommit: (task) => tasks.push(task) };
        await manager.query('SAVEPOINT dispatch_event');
        try {
          for (const subscriber of this.subscribersOf(row.type)) await subscriber.handle(event, manager, context);
          await manager.query('RELEASE SAVEPOINT dispatch_event');
          dispatched.push(row.id);
          afterCommit.push(...tasks);
        } catch (error) {
          await manager.query('ROLLBACK TO SAVEPOINT dispatch_event');
          const delay = Math.min(1000 * 2 ** row.attempts, MAX_RETRY_DELAY_MS);
          const message = error instanceof Error ? error.message : String(error);
          this.logger.warn({ eventId: row.id, type: row.type, attempt: row.attempts + 1, delayMs: delay }, `subscriber failed: ${message}`);
          await manager.query(
            `UPDATE events SET attempts = attempts + 1, last_error = $2, available_at = now() + make_interval(secs => $3::double precision / 1000) WHERE id = $1`,
            [row.id, message.slice(0, 2000), delay],
          );
          this.wakeAt(Date.now() + delay);
        }
      }
      // One statement for the whole batch rather than one per event.
      if (dispatched.length > 0) {
        await manager.query(`UPDATE events SET dispatched_at = now(), attempts = attempts + 1, last_error = NULL WHERE id = ANY($1)`, [
          dispatched,
        ]);
      }
      return rows.length;
    });
    await Promise.all(
      afterCommit.map((task) =>
        task().catch((error: unknown) => this.logger.warn({ err: error }, 'after-commit task of a dispatched event failed')),
      ),
    );
    return claimed;
  }

  private async listen(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({ connectionString: this.config.databaseUrl });
    const retry = () => {
      if (this.stopped || this.reconnectTimer) return;
      this.listener = null;
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = null;
        void this.listen();
      }, 1000);
      this.reconnectTimer.unref();
    };
    client.on('notification', () => this.wake());
    client.on('error', (error) => {
      this.logger.warn(`event listener connection lost: ${error.message}`);
      void client.end().catch(() => undefined);
      retry();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
      this.listener = client;
      // Anything committed while we were not listening is picked up now.
      this.wake();
    } catch (error) {
      this.logger.warn(`event listener could not connect: ${(error as Error).message}`);
      await client.end().catch(() => undefined);
      retry();
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
        const list = this.subscribers.get(type) ?? [];
        list.push({ name: `${wrapper.name as string}.${method}`, handle: (handler as Subscriber['handle']).bind(instance) });
        this.subscribers.set(type, list);
      }
    }
    const names = [...this.subscribers.entries()].map(([type, list]) => `${type} → ${list.map((s) => s.name).join(', ')}`);
    this.logger.log(`domain event subscribers: ${names.length ? names.join('; ') : 'none'}`);
  }
}
