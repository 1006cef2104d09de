import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { getQueueToken } from '@nestjs/bullmq';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { Queue } from 'bullmq';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { BackboneMetrics } from '../../src/infra/metrics/backbone-metrics';
import { QUEUE_NAMES } from '../../src/infra/queue/queues';
import { startHealthServer } from '../../src/worker';
import { factories } from '../support/factories';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';

const METRICS_TOKEN = 'metrics-token-for-tests-only';
const PROMETHEUS_TEXT = /^text\/plain; version=0\.0\.4/;

/** Every metric of the backbone (docs/operations.md "Metrics"). */
const BACKBONE_METRICS = [
  'service_events_dispatched_total',
  'service_event_dispatch_failures_total',
  'service_jobs_relayed_total',
  'service_jobs_recovered_total',
  'service_jobs_started_total',
  'service_jobs_restarted_total',
  'service_webhook_deliveries_total',
  'service_webhook_delivery_attempt_seconds',
  'service_metrics_scrape_errors_total',
  'service_events_undispatched',
  'service_events_oldest_undispatched_age_seconds',
  'service_job_outbox_unrelayed',
  'service_job_outbox_oldest_unrelayed_age_seconds',
  'service_job_outbox_relayed_unfinished',
  'service_queue_jobs',
  'service_webhook_deliveries_pending',
];

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
function parseSamples(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
      return { name: match[1], labels, value: Number(match[3]) };
    });
}

/** The value of the one sample of `name` with these labels (others ignored), or undefined when absent. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value;
}

describe('GET /metrics (Prometheus)', () => {
  let env: TestEnvironment;
  let app: NestFastifyApplication;
  let url: string;
  let dataSource: DataSource;

  const scrape = async (base = url): Promise<Sample[]> => {
    const response = await request(base).get('/metrics').set('authorization', `Bearer ${METRICS_TOKEN}`).expect(200);
    return parseSamples(response.text);
  };

  beforeAll(async () => {
    env = await TestEnvironment.create({ METRICS_TOKEN });
    // The api role alone: no relay or dispatcher runs, so what the test records stays in the outboxes.
    ({ app, url } = await env.startApi());
    dataSource = app.get(getDataSourceToken());
  });
  afterAll(() => env.close());

  it('answers the Prometheus text format with every backbone metric and the process metrics', async () => {
    const response = await request(url).get('/metrics').set('authorization', `Bearer ${METRICS_TOKEN}`).expect(200);
    expect(response.headers['content-type']).toMatch(PROMETHEUS_TEXT);
    for (const name of BACKBONE_METRICS) expect(response.text).toContain(`# TYPE ${name} `);
    expect(response.text).toContain('# TYPE service_process_cpu_user_seconds_total counter');
    expect(response.text).toContain('# TYPE service_nodejs_eventloop_lag_seconds gauge');
    const samples = parseSamples(response.text);
    // Every queue's series exist from the start, so rate() sees the first increment.
    for (const queue of QUEUE_NAMES) expect(valueOf(samples, 'service_jobs_relayed_total', { queue })).toBe(0);
    expect(valueOf(samples, 'service_metrics_scrape_errors_total', { source: 'database' })).toBe(0);
    expect(valueOf(samples, 'service_metrics_scrape_errors_total', { source: 'redis' })).toBe(0);
  });

  it('reports an unrelayed job and an undispatched event as backlog with the age of the oldest', async () => {
    const before = await scrape();
    expect(valueOf(before, 'service_job_outbox_unrelayed')).toBe(0);
    expect(valueOf(before, 'service_job_outbox_oldest_unrelayed_age_seconds')).toBe(0);

    const make = factories(dataSource);
    await make.outboxJob({ id: 'job_metrics_waiting', queue: 'system', name: 'probe', createdAgo: '3 seconds' });
    await make.outboxJob({ id: 'job_metrics_relayed', queue: 'system', name: 'probe', relayedAgo: '0 seconds' });
    await make.event({ id: 'evt_metrics_waiting', type: 'metrics.probe', createdAgo: '5 seconds' });

    const after = await scrape();
    expect(valueOf(after, 'service_job_outbox_unrelayed')).toBe(1);
    expect(valueOf(after, 'service_job_outbox_oldest_unrelayed_age_seconds')).toBeGreaterThanOrEqual(3);
    expect(valueOf(after, 'service_job_outbox_relayed_unfinished')).toBe(valueOf(before, 'service_job_outbox_relayed_unfinished')! + 1);
    expect(valueOf(after, 'service_events_undispatched')).toBe(valueOf(before, 'service_events_undispatched')! + 1);
    expect(valueOf(after, 'service_events_oldest_undispatched_age_seconds')).toBeGreaterThanOrEqual(5);
    expect(valueOf(after, 'service_webhook_deliveries_pending')).toBe(0);

    await make.removeJobs(['job_metrics_waiting', 'job_metrics_relayed']);
    await make.removeEvents(['evt_metrics_waiting']);
    expect(valueOf(await scrape(), 'service_job_outbox_unrelayed')).toBe(0);
  });

  it('reports BullMQ job counts per queue and state', async () => {
    const queue = app.get<Queue>(getQueueToken('system'), { strict: false });
    const job = await queue.add('metrics-probe', {}, { jobId: 'metrics-probe', delay: 3_600_000 });
    try {
      const samples = await scrape();
      expect(valueOf(samples, 'service_queue_jobs', { queue: 'system', state: 'delayed' })).toBe(1);
      for (const name of QUEUE_NAMES) {
        for (const state of ['waiting', 'prioritized', 'active', 'delayed', 'failed']) {
          expect(valueOf(samples, 'service_queue_jobs', { queue: name, state })).toEqual(expect.any(Number));
        }
      }
    } finally {
      await job.remove();
    }
  });

  it('counts what the backbone code reports: dispatches, relays, recoveries, job starts and delivery outcomes with latency', async () => {
    const metrics = app.get(BackboneMetrics);
    metrics.eventsDispatched(3);
    metrics.eventDispatchFailures(1);
    metrics.jobsRelayed('mail', 2);
    metrics.jobsRecovered('mail', 1);
    metrics.jobStarted('webhook-delivery');
    metrics.jobStarted('webhook-delivery');
    metrics.jobRestarted('webhook-delivery');
    metrics.webhookDelivery('delivered', 40);
    metrics.webhookDelivery('retry', 1_200);
    metrics.webhookDelivery('failed', 10);

    const samples = await scrape();
    expect(valueOf(samples, 'service_events_dispatched_total')).toBe(3);
    expect(valueOf(samples, 'service_event_dispatch_failures_total')).toBe(1);
    expect(valueOf(samples, 'service_jobs_relayed_total', { queue: 'mail' })).toBe(2);
    expect(valueOf(samples, 'service_jobs_relayed_total', { queue: 'system' })).toBe(0);
    expect(valueOf(samples, 'service_jobs_recovered_total', { queue: 'mail' })).toBe(1);
    expect(valueOf(samples, 'service_jobs_started_total', { queue: 'webhook-delivery' })).toBe(2);
    expect(valueOf(samples, 'service_jobs_restarted_total', { queue: 'webhook-delivery' })).toBe(1);
    expect(valueOf(samples, 'service_webhook_deliveries_total', { outcome: 'delivered' })).toBe(1);
    expect(valueOf(samples, 'service_webhook_deliveries_total', { outcome: 'retry' })).toBe(1);
    expect(valueOf(samples, 'service_webhook_deliveries_total', { outcome: 'failed' })).toBe(1);
    const bucket = (outcome: string, le: string) => valueOf(samples, 'service_webhook_delivery_attempt_seconds_bucket', { outcome, le });
    expect(bucket('delivered', '0.025')).toBe(0);
    expect(bucket('delivered', '0.05')).toBe(1);
    expect(bucket('retry', '1')).toBe(0);
    expect(bucket('retry', '2.5')).toBe(1);
    expect(valueOf(samples, 'service_webhook_delivery_attempt_seconds_sum', { outcome: 'retry' })).toBeCloseTo(1.2);
  });

  it('refuses a scrape without the token with 401 in the user envelope, and takes the operator token too', async () => {
    const missing = await request(url).get('/metrics').expect(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer');
    expect(missing.body).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.any(String), status: 401 } });
    const wrong = await request(url).get('/metrics').set('authorization', 'Bearer not-the-metrics-token').expect(401);
    expect(wrong.body).toEqual({ error: { code: 'UNAUTHORIZED', message: 'The metrics token is not valid', status: 401 } });
    const operator = await request(url).get('/metrics').set('authorization', `Bearer ${OPERATOR_TOKEN}`).expect(200);
    expect(operator.headers['content-type']).toMatch(PROMETHEUS_TEXT);
  });

  it('is closed with 403 on an api without a metrics or operator token', async () => {
    const closed = await env.startApi({ env: { METRICS_TOKEN: '', OPERATOR_TOKEN: '' } });
    const response = await request(closed.url).get('/metrics').set('authorization', `Bearer ${METRICS_TOKEN}`).expect(403);
    expect(response.body).toEqual({ error: { code: 'FORBIDDEN', message: expect.stringContaining('METRICS_TOKEN'), status: 403 } });
  });

  it('still answers when Redis is away: the queue gauges are left out and the failure counted', async () => {
    // Port 1 on loopback: nothing listens there.
    const { url: degraded } = await env.startApi({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    const samples = await scrape(degraded);
    expect(samples.filter((s) => s.name === 'service_queue_jobs')).toEqual([]);
    expect(valueOf(samples, 'service_metrics_scrape_errors_total', { source: 'redis' })).toBe(1);
    expect(valueOf(samples, 'service_metrics_scrape_errors_total', { source: 'database' })).toBe(0);
    expect(valueOf(samples, 'service_job_outbox_unrelayed')).toBe(0);
  });

  it("serves the same metrics without a token on the worker's health port", async () => {
    const worker = await env.startWorker();
    const server: Server = startHealthServer(worker, 0, '127.0.0.1');
    try {
      if (!server.listening) await once(server, 'listening');
      const { port } = server.address() as AddressInfo;
      // fetch, not supertest: the health port serves no OpenAPI document to check the answer against.
      const response = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(PROMETHEUS_TEXT);
      const text = await response.text();
      for (const name of BACKBONE_METRICS) expect(text).toContain(`# TYPE ${name} `);
      const samples = parseSamples(text);
      expect(valueOf(samples, 'service_job_outbox_unrelayed')).toEqual(expect.any(Number));
      expect(valueOf(samples, 'service_queue_jobs', { queue: 'webhook-delivery', state: 'waiting' })).toEqual(expect.any(Number));
      const live = await fetch(`http://127.0.0.1:${port}/health/live`);
      expect(live.status).toBe(200);
    } finally {
      server.close();
    }
  });
});
