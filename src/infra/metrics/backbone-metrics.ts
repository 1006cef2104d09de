import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { QUEUE_NAMES } from '../queue/queues';
import { BackboneBacklog, BackboneBacklogRepository } from './backbone-backlog.repository';
import { QUEUE_STATES, QueueDepths, QueueState } from './queue-depths';

/** Prefix of every metric the service exports, the process metrics included. */
export const METRIC_PREFIX = 'service_';

export type DeliveryOutcome = 'delivered' | 'retry' | 'failed';
const DELIVERY_OUTCOMES: DeliveryOutcome[] = ['delivered', 'retry', 'failed'];

/** Where the gauges read on scrape come from; one that fails is skipped and counted, the scrape still answers. */
type Source = 'database' | 'redis';
const SOURCES: Source[] = ['database', 'redis'];

interface Scrape {
  backlog: Promise<BackboneBacklog | null>;
  depths: Promise<Map<string, Record<QueueState, number>> | null>;
  renders: number;
}

/** Longest a scrape waits for one source: well inside Prometheus's default 10 s scrape timeout. */
export const SOURCE_TIMEOUT_MS = 2_000;

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

/**
 * The metrics of this process (docs/operations.md "Metrics"): counters the backbone code increments, and gauges read
 * from PostgreSQL and BullMQ when Prometheus scrapes. One registry per application instance, so two apps in one
 * process (APP_ROLE=all shares one; tests start several) never mix their counts.
 */
@Injectable()
export class BackboneMetrics implements OnModuleDestroy {
  private readonly logger = new Logger(BackboneMetrics.name);
  readonly registry = new Registry();
  /** Reads of a source not settled yet (one may outlive the scrape that started it). */
  private readonly reads = new Map<Source, Promise<unknown>>();
  /** The scrape in progress: its sources read once, shared by every gauge and by concurrent scrapes. */
  private scrape: Scrape | undefined;

  private readonly dispatched: Counter;
  private readonly dispatchFailures: Counter;
  private readonly relayed: Counter<'queue'>;
  private readonly recovered: Counter<'queue'>;
  private readonly started: Counter<'queue'>;
  private readonly restarted: Counter<'queue'>;
  private readonly deliveries: Counter<'outcome'>;
  private readonly deliveryLatency: Histogram<'outcome'>;
  private readonly scrapeErrors: Counter<'source'>;

  constructor(
    private readonly backlog: BackboneBacklogRepository,
    private readonly queueDepths: QueueDepths,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });

    this.dispatched = new Counter({
      name: `${METRIC_PREFIX}events_dispatched_total`,
      help: 'Domain events handed to every subscriber and marked dispatched',
      registers,
    });
    this.dispatchFailures = new Counter({
      name: `${METRIC_PREFIX}event_dispatch_failures_total`,
      help: 'Domain event dispatch attempts that failed and were scheduled for a retry',
      registers,
    });
    this.relayed = new Counter({
      name: `${METRIC_PREFIX}jobs_relayed_total`,
      help: 'Job outbox rows added to their BullMQ queue by the relay',
      labelNames: ['queue'],
      registers,
    });
    this.recovered = new Counter({
      name: `${METRIC_PREFIX}jobs_recovered_total`,
      help: "Relayed jobs that BullMQ no longer held and the relay's safety sweep added again",
      labelNames: ['queue'],
      registers,
    });
    this.started = new Counter({
      name: `${METRIC_PREFIX}jobs_started_total`,
      help: 'Jobs a processor of this process started',
      labelNames: ['queue'],
      registers,
    });
    this.restarted = new Counter({
      name: `${METRIC_PREFIX}jobs_restarted_total`,
      help: 'Jobs started again after a deferral (for example an endpoint at its concurrency limit)',
      labelNames: ['queue'],
      registers,
    });
    this.deliveries = new Counter({
      name: `${METRIC_PREFIX}webhook_deliveries_total`,
      help: 'Webhook delivery attempts by outcome: delivered, retry (a retry is scheduled) or failed (no retry left)',
      labelNames: ['outcome'],
      registers,
    });
    this.deliveryLatency = new Histogram({
      name: `${METRIC_PREFIX}webhook_delivery_attempt_seconds`,
      help: 'Duration of one webhook delivery attempt (the signed POST), by outcome',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.scrapeErrors = new Counter({
      name: `${METRIC_PREFIX}metrics_scrape_errors_total`,
      help: 'Scrapes that could not read a source of gauges (database or redis); those gauges were left out',
      labelNames: ['source'],
      registers,
    });
    // Every series exists from the start at 0, so rate() and increase() see the first increment.
    for (const queue of QUEUE_NAMES)
      for (const counter of [this.relayed, this.recovered, this.started, this.restarted]) counter.inc({ queue }, 0);
    for (const outcome of DELIVERY_OUTCOMES) {
      this.deliveries.inc({ outcome }, 0);
      this.deliveryLatency.zero({ outcome });
    }
    for (const source of SOURCES) this.scrapeErrors.inc({ source }, 0);

    this.backlogGauge('events_undispatched', 'Domain events not dispatched yet (counted up to 100000)', (b) => b.eventsUndispatched);
    this.backlogGauge(
      'events_oldest_undispatched_age_seconds',
      'Age of the oldest domain event not dispatched yet: the outbox lag (0 when none waits)',
      (b) => b.eventsOldestAgeSeconds,
    );
    this.backlogGauge(
      'job_outbox_unrelayed',
      'Job outbox rows not relayed to BullMQ yet: the relay backlog (counted up to 100000)',
      (b) => b.jobsUnrelayed,
    );
    this.backlogGauge(
      'job_outbox_oldest_unrelayed_age_seconds',
      'Age of the oldest job outbox row not relayed yet (0 when none waits)',
      (b) => b.jobsOldestAgeSeconds,
    );
    this.backlogGauge(
      'job_outbox_relayed_unfinished',
      'Job outbox rows relayed to BullMQ whose job has not finished (counted up to 100000)',
      (b) => b.jobsRelayedUnfinished,
    );
    this.backlogGauge(
      'job_outbox_failed',
      'Jobs that failed for good, kept in the job outbox to be run again after a cool-down (after 6 failures they wait for an operator)',
      (b) => b.jobsFailed,
    );
    this.backlogGauge(
      'webhook_deliveries_pending',
      'Webhook deliveries neither delivered nor failed: in flight or waiting for a retry (counted up to 100000)',
      (b) => b.webhookDeliveriesPending,
    );

    const depthsOfScrape = () => this.scrape?.depths ?? this.read('redis', () => this.queueDepths.read());
    new Gauge({
      name: `${METRIC_PREFIX}queue_jobs`,
      help: 'BullMQ jobs per queue and state (waiting, prioritized, active, delayed, failed)',
      labelNames: ['queue', 'state'],
      registers,
      async collect() {
        const depths = await depthsOfScrape();
        this.reset();
        for (const [queue, counts] of depths ?? []) {
          for (const state of QUEUE_STATES) this.set({ queue, state }, counts[state]);
        }
      },
    });
  }

  /** `n` domain events were handed to every subscriber and marked dispatched. */
  eventsDispatched(n: number): void {
    this.dispatched.inc(n);
  }

  /** Dispatch of `n` events failed and they were scheduled for a retry. */
  eventDispatchFailures(n: number): void {
    this.dispatchFailures.inc(n);
  }

  /** The relay added `n` job outbox rows to `queue`. */
  jobsRelayed(queue: string, n: number): void {
    this.relayed.inc({ queue }, n);
  }

  /** The relay's safety sweep added `n` relayed jobs of `queue` again because BullMQ had lost them. */
  jobsRecovered(queue: string, n: number): void {
    this.recovered.inc({ queue }, n);
  }

  /** One webhook delivery attempt ended with `outcome` after `latencyMs` milliseconds. */
  webhookDelivery(outcome: DeliveryOutcome, latencyMs: number): void {
    this.deliveries.inc({ outcome });
    this.deliveryLatency.observe({ outcome }, latencyMs / 1000);
  }

  /** A processor started a job of `queue` (every start, restarts included). */
  jobStarted(queue: string): void {
    this.started.inc({ queue });
  }

  /** A processor started a job of `queue` again after deferring it. */
  jobRestarted(queue: string): void {
    this.restarted.inc({ queue });
  }

  /**
   * The Prometheus text exposition of every metric. Each source is read once, before the registry renders, so a
   * failing one is already counted in the scrape that saw it fail; its gauges are left out and the scrape answers.
   */
  async render(): Promise<{ contentType: string; body: string }> {
    const scrape = (this.scrape ??= {
      backlog: this.read('database', () => this.backlog.read()),
      depths: this.read('redis', () => this.queueDepths.read()),
      renders: 0,
    });
    scrape.renders++;
    try {
      await Promise.all([scrape.backlog, scrape.depths]);
      return { contentType: this.registry.contentType, body: await this.registry.metrics() };
    } finally {
      if (--scrape.renders === 0 && this.scrape === scrape) this.scrape = undefined;
    }
  }

  onModuleDestroy(): void {
    this.registry.clear();
  }

  /** A gauge read from the database on scrape, left out of the answer when the database does not answer. */
  private backlogGauge(name: string, help: string, pick: (backlog: BackboneBacklog) => number): void {
    const backlogOfScrape = () => this.scrape?.backlog ?? this.read('database', () => this.backlog.read());
    new Gauge({
      name: `${METRIC_PREFIX}${name}`,
      help,
      registers: [this.registry],
      async collect() {
        const backlog = await backlogOfScrape();
        if (backlog) this.set(pick(backlog));
        else this.remove();
      },
    });
  }

  /**
   * Reads a source within SOURCE_TIMEOUT_MS, counting a failure or a timeout as a scrape error (null: leave its gauges
   * out). A read that outlives its wait is reused by the next scrape rather than started again, so a hanging database
   * does not collect one query per scrape.
   */
  private read<T>(source: Source, read: () => Promise<T>): Promise<T | null> {
    let reading = this.reads.get(source) as Promise<T> | undefined;
    if (!reading) {
      reading = Promise.resolve()
        .then(read)
        .finally(() => this.reads.delete(source));
      this.reads.set(source, reading);
    }
    return within(reading, SOURCE_TIMEOUT_MS).catch((error: unknown) => {
      this.scrapeErrors.inc({ source });
      this.logger.warn(`metrics: ${source} not read: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    });
  }
}
