import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { getDataSourceToken } from '@nestjs/typeorm';
import Redis from 'ioredis';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { prepareDatabase } from '../../src/infra/database/migrate';
import { userChannel } from '../../src/infra/realtime/gateway-channels';
import { DomainEvents } from '../../src/modules/events/domain-events';
import { DURABLE_COPY_DELAY_MS } from '../../src/modules/messages/message-created';
import { freePort } from '../support/free-port';
import { GatewayClient } from '../support/gateway-client';
import { SpawnedRole, TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { PostgresCluster } from '../support/postgres-cluster';
import { RedisProcess } from '../support/redis-process';
import { appToken, onboardDeveloper, registerApp } from '../support/providers';
import { subscribeWebhook } from '../support/webhook-profiles';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { LoggedInUser, login, raiseToEnterprise } from '../support/users';
import { waitFor } from '../support/wait-for';
import { WebhookReceiver } from '../support/webhook-receiver';

/**
 * Issue 16, "Reliability (fault tests)": the event backbone (events outbox →
 * dispatcher → set-based webhook fan-out → job outbox → relay → BullMQ →
 * signed HTTPS delivery; and the durable copy of `message.created`) under a
 * killed worker, a Redis restart that loses every queued job, a PostgreSQL
 * restart, and an api instance that dies right after a message commits.
 *
 * The burst: FAULT_BURST_EVENTS (default 3,000) webhook-able events recorded
 * with `DomainEvents.record` (100 per transaction, two producers, as the
 * webhooks bench does), spread over four apps, each with its own endpoint on a
 * local HTTPS receiver that answers after RECEIVER_DELAY_MS so the burst takes
 * several seconds to deliver and the fault lands in its middle (the tests
 * check that: fewer than all events had arrived when the fault hit).
 *
 * The relay's safety sweep runs every second and checks relayed rows after
 * two seconds in every test (JOB_RELAY_SWEEP_MS, JOB_RELAY_CHECK_AFTER_MS):
 * in the Redis test it is what re-adds the lost jobs; in the others it only
 * settles the outbox rows of jobs that finished in a process that died before
 * deleting them (with the defaults, 15 s and 60 s, the outbox would drain a
 * minute later, which the tests would only wait for).
 *
 * Needs `npm run build` (dist/main.js, dist/worker.js): `npm run test:faults`.
 */
const EVENTS = Number(process.env.FAULT_BURST_EVENTS ?? 3_000);
const APPS = 4;
const BATCH = 100;
const PRODUCERS = 2;
/** The receiver answers after this long: 4 apps × 4 slots in flight, about 500 deliveries/s at most. */
const RECEIVER_DELAY_MS = 30;
/** A wait for the burst fails when nothing new has arrived for this long. */
const STALL_MS = 45_000;
/**
 * How long PostgreSQL stays down: longer than BullMQ's own retries of a delivery job last (5 attempts, backoff from
 * 1 s: about 15 s in all), so jobs fail for good during the outage. Their job_outbox rows are kept, marked failed,
 * and the relay's sweep runs them again after JOB_RELAY_RETRY_FAILED_MS; nothing is lost.
 */
const PG_OUTAGE_MS = Number(process.env.FAULT_PG_OUTAGE_MS ?? 20_000);
const FAST_SWEEP = { JOB_RELAY_SWEEP_MS: '1000', JOB_RELAY_CHECK_AFTER_MS: '2000', JOB_RELAY_RETRY_FAILED_MS: '2000' };

jest.setTimeout(200_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Spawns a worker process and waits until its processors run. */
async function startWorker(env: TestEnvironment, extra: Record<string, string> = {}): Promise<SpawnedRole> {
  const worker = env.spawnRole('worker', { WORKER_HEALTH_PORT: '0', ...FAST_SWEEP, ...extra });
  await worker.waitForOutput(/worker started/, 60_000);
  return worker;
}

/**
 * A developer with APPS apps through the real API, each subscribed to
 * `capability.invoked` at its own path of the receiver. Needs a worker (the
 * verification mail goes through the job outbox).
 */
async function subscribedApps(url: string, smtp: SmtpSink, receiver: WebhookReceiver, email: string): Promise<string[]> {
  const developer = await onboardDeveloper(url, smtp, email);
  const apps: string[] = [];
  for (let i = 0; i < APPS; i += 1) {
    const app = await registerApp(url, developer, { name: `Fault Hooks ${i}`, webhook_url: `${receiver.url}/${i}` });
    const auth = { authorization: `Bearer ${await appToken(url, app)}` };
    await subscribeWebhook(url, app, auth, { event_types: ['capability.invoked'] });
    apps.push(app.id);
  }
  return apps;
}

/** Records EVENTS events (event id → app), BATCH per committed transaction, from PRODUCERS producers at once. */
async function recordBurst(dataSource: DataSource, events: DomainEvents, apps: string[]): Promise<Map<string, string>> {
  const recorded = new Map<string, string>();
  let next = 0;
  await Promise.all(
    Array.from({ length: PRODUCERS }, async () => {
      while (next < EVENTS) {
        const from = next;
        const count = Math.min(BATCH, EVENTS - from);
        next += count;
        const batch: Array<[string, string]> = [];
        await dataSource.transaction(async (manager) => {
          for (let i = from; i < from + count; i += 1) {
            const appId = apps[i % apps.length];
            const event = await events.record(manager, {
              type: 'capability.invoked',
              payload: {
                app_id: appId,
                data: {
                  capability_name: 'balance',
                  mode: 'state',
                  user_id: 'usr_fault',
                  install_id: 'inst_fault',
                  request_id: `req_fault${i}`,
                  duration_ms: 12,
                  status: 'ok',
                },
              },
            });
            batch.push([event.id, appId]);
          }
        });
        for (const [id, appId] of batch) recorded.set(id, appId);
      }
    }),
  );
  return recorded;
}

/** Distinct burst events the receiver has seen. */
function receivedIds(receiver: WebhookReceiver, burst: Map<string, string>): Set<string> {
  const ids = new Set<string>();
  for (const r of receiver.received) {
    const id = r.body.id as string;
    if (burst.has(id)) ids.add(id);
  }
  return ids;
}

/** Waits until at least `count` burst events have arrived; fails when none arrives for STALL_MS. */
async function untilReceived(receiver: WebhookReceiver, burst: Map<string, string>, count: number, what: string): Promise<number> {
  let seen = -1;
  let progressAt = Date.now();
  for (;;) {
    const now = receivedIds(receiver, burst).size;
    if (now >= count) return now;
    if (now > seen) {
      seen = now;
      progressAt = Date.now();
    } else if (Date.now() - progressAt > STALL_MS) {
      throw new Error(`${what}: ${now} of ${burst.size} events received, none new for ${STALL_MS / 1000} s`);
    }
    await sleep(20);
  }
}

/**
 * Nothing lost: every event received at least once at its own app's endpoint;
 * one original delivery row per event, for its app and no other, every one
 * `delivered`; a `delivered` line in the attempt log for each; the job outbox
 * empty. Returns figures for the log line.
 */
async function expectNothingLost(dataSource: DataSource, receiver: WebhookReceiver, burst: Map<string, string>, apps: string[]) {
  await untilReceived(receiver, burst, burst.size, 'every event received');
  const ids = [...burst.keys()];
  // Every receipt went to the endpoint of the event's app.
  for (const r of receiver.received) {
    const id = r.body.id as string;
    if (!burst.has(id)) continue;
    expect(`${id} ${r.body.app_id as string}`).toBe(`${id} ${burst.get(id)!}`);
  }
  // The receipt comes before the row's update: wait for the rows.
  const statuses = await waitFor(
    async () => {
      const rows: Array<{ status: string; n: number }> = await dataSource.query(
        `SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE event_id = ANY($1) GROUP BY status`,
        [ids],
      );
      const counts = Object.fromEntries(rows.map((r) => [r.status, r.n]));
      return counts.delivered === burst.size && rows.length === 1 ? counts : undefined;
    },
    { what: `${burst.size} deliveries marked delivered`, timeoutMs: 30_000, intervalMs: 200 },
  ).catch(async (error: Error) => {
    const rows: unknown = await dataSource.query(
      `SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE event_id = ANY($1) GROUP BY status`,
      [ids],
    );
    throw new Error(`${error.message}; rows by status: ${JSON.stringify(rows)}`);
  });
  expect(statuses).toEqual({ delivered: burst.size });

  const rows: Array<{ id: string; event_id: string; app_id: string; replay_of: string | null; test: boolean; attempt_count: number }> =
    await dataSource.query(
      `SELECT id, event_id, app_id, replay_of, test, attempt_count FROM webhook_deliveries WHERE app_id = ANY($1) OR event_id = ANY($2)`,
      [apps, ids],
    );
  // Exactly one original delivery per event, to the app it names, and nothing else for these apps.
  expect(rows.filter((r) => r.replay_of !== null || r.test)).toEqual([]);
  const perEvent = new Map<string, string[]>();
  for (const r of rows) perEvent.set(r.event_id, [...(perEvent.get(r.event_id) ?? []), r.app_id]);
  expect(perEvent.size).toBe(burst.size);
  const wrong = [...perEvent].filter(([eventId, appIds]) => appIds.length !== 1 || appIds[0] !== burst.get(eventId));
  expect(wrong).toEqual([]);

  // The attempt log accounts for every delivery: exactly one `delivered` line, for the delivery's last claimed attempt
  // (an attempt cut short by the fault, sent or not, leaves no line; the next one is claimed with the next number).
  const logged: Array<{ id: string; delivered: number; delivered_attempt: number | null; attempt_count: number }> = await dataSource.query(
    `SELECT d.id, d.attempt_count,
            count(a.*) FILTER (WHERE a.outcome = 'delivered')::int AS delivered,
            max(a.attempt) FILTER (WHERE a.outcome = 'delivered') AS delivered_attempt
       FROM webhook_deliveries d LEFT JOIN webhook_attempts a ON a.delivery_id = d.id
      WHERE d.event_id = ANY($1)
      GROUP BY d.id`,
    [ids],
  );
  expect(logged).toHaveLength(burst.size);
  expect(logged.filter((l) => l.delivered !== 1 || l.delivered_attempt !== l.attempt_count)).toEqual([]);
  // An event that arrived more than once came with a new attempt number each time: no attempt was sent twice.
  const attemptsSeen = new Map<string, string[]>();
  for (const r of receiver.received) {
    const id = r.body.id as string;
    if (burst.has(id)) attemptsSeen.set(id, [...(attemptsSeen.get(id) ?? []), String(r.headers['x-service-delivery-attempt'])]);
  }
  expect([...attemptsSeen].filter(([, attempts]) => new Set(attempts).size !== attempts.length)).toEqual([]);

  // The job outbox drains: every delivery job finished and its row settled.
  const left = await waitFor(
    async () => {
      const [{ n }]: Array<{ n: number }> = await dataSource.query(`SELECT count(*)::int AS n FROM job_outbox`);
      return n === 0 ? 0 : undefined;
    },
    { what: 'job_outbox to drain', timeoutMs: 30_000, intervalMs: 250 },
  ).catch(async (error: Error) => {
    const rows: unknown = await dataSource.query(
      `SELECT queue, relayed_at IS NOT NULL AS relayed, count(*)::int AS n FROM job_outbox GROUP BY 1, 2`,
    );
    throw new Error(`${error.message}; left: ${JSON.stringify(rows)}`);
  });
  expect(left).toBe(0);

  const receipts = receiver.received.filter((r) => burst.has(r.body.id as string)).length;
  return {
    duplicates: receipts - burst.size,
    retriedDeliveries: logged.filter((l) => l.attempt_count > 1).length,
  };
}

describe('the event backbone loses nothing under faults', () => {
  beforeAll(() => {
    assertTestCaTrusted();
    for (const entry of ['main', 'worker'])
      if (!existsSync(join(__dirname, '..', '..', 'dist', `${entry}.js`)))
        throw new Error(`dist/${entry}.js is missing: run npm run build first`);
  });

  describe('a worker killed with SIGKILL in the middle of the burst', () => {
    let smtp: SmtpSink;
    let receiver: WebhookReceiver;
    let env: TestEnvironment;

    beforeAll(async () => {
      smtp = await SmtpSink.start();
      receiver = await WebhookReceiver.start();
      env = await TestEnvironment.create({ SMTP_URL: smtp.url });
    });
    afterAll(async () => {
      await env?.close();
      await receiver?.close();
      await smtp?.close();
    });

    it(`delivers every one of ${EVENTS} events at least once, one delivery row each, all delivered and logged, outbox empty`, async () => {
      const api = await env.startApi();
      const dataSource: DataSource = api.app.get(getDataSourceToken());
      const first = await startWorker(env);
      const apps = await subscribedApps(api.url, smtp, receiver, 'fault-backbone-kill@example.com');
      receiver.fallback = { status: 200, body: 'ok', delayMs: RECEIVER_DELAY_MS };

      const startedAt = Date.now();
      const burst = await recordBurst(dataSource, api.app.get(DomainEvents), apps);
      const atKill = await untilReceived(receiver, burst, Math.ceil(EVENTS / 3), 'a third of the burst');
      await first.kill();
      expect((await first.exited).signal).toBe('SIGKILL');
      const killedAt = Date.now();
      // The kill landed mid-burst: work was still pending (and some of it in the dead worker's hands).
      expect(atKill).toBeLessThan(EVENTS);
      const [{ pending }]: Array<{ pending: number }> = await dataSource.query(
        `SELECT count(*)::int AS pending FROM webhook_deliveries WHERE status = 'pending'`,
      );
      expect(pending).toBeGreaterThan(0);

      const second = await startWorker(env);
      const figures = await expectNothingLost(dataSource, receiver, burst, apps);
      expect(second.child.exitCode).toBeNull();
      console.log(
        `worker SIGKILL at ${atKill} of ${EVENTS} received (${pending} deliveries pending); all delivered ` +
          `${Math.round((Date.now() - killedAt) / 1000)} s after the kill, ${Math.round((Date.now() - startedAt) / 1000)} s after the burst began; ` +
          `${figures.duplicates} duplicate receipts, ${figures.retriedDeliveries} deliveries with more than one attempt`,
      );
    });
  });

  describe('Redis restarted without persistence in the middle of the burst', () => {
    let redis: RedisProcess;
    let smtp: SmtpSink;
    let receiver: WebhookReceiver;
    let env: TestEnvironment;

    beforeAll(async () => {
      redis = new RedisProcess(await freePort());
      await redis.start();
      smtp = await SmtpSink.start();
      receiver = await WebhookReceiver.start();
      env = await TestEnvironment.create({ SMTP_URL: smtp.url, REDIS_URL: redis.url });
    });
    afterAll(async () => {
      await env?.close();
      await receiver?.close();
      await smtp?.close();
      await redis?.destroy();
    });

    it('recovers by itself: the relay’s sweep re-adds the lost jobs and every event is delivered', async () => {
      const api = await env.startApi();
      const dataSource: DataSource = api.app.get(getDataSourceToken());
      const worker = await startWorker(env);
      const apps = await subscribedApps(api.url, smtp, receiver, 'fault-backbone-redis@example.com');
      receiver.fallback = { status: 200, body: 'ok', delayMs: RECEIVER_DELAY_MS };

      const burst = await recordBurst(dataSource, api.app.get(DomainEvents), apps);
      const atStop = await untilReceived(receiver, burst, Math.ceil(EVENTS / 3), 'a third of the burst');
      await redis.kill();
      const stoppedAt = Date.now();
      expect(atStop).toBeLessThan(EVENTS);
      await sleep(3_000);
      await redis.start();
      // The new server is empty: whatever was queued is gone.
      const probe = new Redis(redis.url, { maxRetriesPerRequest: 1 });
      const [, keysRightAfter] = await probe.scan('0', 'MATCH', `{${env.env.REDIS_PREFIX}}:bull:webhook-delivery:*`, 'COUNT', 10_000);
      probe.disconnect();
      const [{ pending }]: Array<{ pending: number }> = await dataSource.query(
        `SELECT count(*)::int AS pending FROM webhook_deliveries WHERE status = 'pending'`,
      );
      expect(pending).toBeGreaterThan(0);

      const figures = await expectNothingLost(dataSource, receiver, burst, apps);
      expect(worker.child.exitCode).toBeNull();
      const recovered = worker.output.match(/re-added jobs that BullMQ had lost/g)?.length ?? 0;
      expect(recovered).toBeGreaterThan(0);
      console.log(
        `Redis killed at ${atStop} of ${EVENTS} received (${pending} deliveries pending; ${keysRightAfter.length} delivery keys right after the restart), ` +
          `back 3 s later; all delivered ${Math.round((Date.now() - stoppedAt) / 1000)} s after the kill; ` +
          `${recovered} sweeps re-added lost jobs; ${figures.duplicates} duplicate receipts`,
      );
    });
  });

  describe('PostgreSQL restarted in the middle of the burst', () => {
    let cluster: PostgresCluster;
    let smtp: SmtpSink;
    let receiver: WebhookReceiver;
    let env: TestEnvironment;

    beforeAll(async () => {
      cluster = await PostgresCluster.create();
      await cluster.start();
      const databaseUrl = cluster.url(`svc_fault_${randomBytes(4).toString('hex')}`);
      await prepareDatabase(databaseUrl);
      smtp = await SmtpSink.start();
      receiver = await WebhookReceiver.start();
      env = await TestEnvironment.create({ SMTP_URL: smtp.url, DATABASE_URL: databaseUrl });
    });
    afterAll(async () => {
      await env?.close();
      await receiver?.close();
      await smtp?.close();
      await cluster?.destroy();
    });

    it('recovers by itself and every event is delivered', async () => {
      const api = await env.startApi();
      const dataSource: DataSource = api.app.get(getDataSourceToken());
      const worker = await startWorker(env);
      const apps = await subscribedApps(api.url, smtp, receiver, 'fault-backbone-pg@example.com');
      receiver.fallback = { status: 200, body: 'ok', delayMs: RECEIVER_DELAY_MS };

      const burst = await recordBurst(dataSource, api.app.get(DomainEvents), apps);
      const atStop = await untilReceived(receiver, burst, Math.ceil(EVENTS / 3), 'a third of the burst');
      await cluster.stop('fast');
      const stoppedAt = Date.now();
      expect(atStop).toBeLessThan(EVENTS);
      const duringOutage = receivedIds(receiver, burst).size;
      await sleep(PG_OUTAGE_MS);
      await cluster.start();
      const [{ pending }]: Array<{ pending: number }> = await waitFor(
        () => dataSource.query(`SELECT count(*)::int AS pending FROM webhook_deliveries WHERE status = 'pending'`),
        { what: 'the database to answer again', timeoutMs: 15_000, intervalMs: 200 },
      );
      expect(pending).toBeGreaterThan(0);

      const figures = await expectNothingLost(dataSource, receiver, burst, apps);
      expect(worker.child.exitCode).toBeNull();
      console.log(
        `PostgreSQL stopped at ${atStop} of ${EVENTS} received (${duringOutage} right after the stop; ${pending} deliveries pending after the restart), ` +
          `back ${PG_OUTAGE_MS / 1000} s later; all delivered ${Math.round((Date.now() - stoppedAt) / 1000)} s after the stop; ` +
          `${figures.duplicates} duplicate receipts, ${figures.retriedDeliveries} deliveries with more than one attempt`,
      );
    });
  });

  describe('an api instance killed right after a message commits', () => {
    let idp: TestIdentityProvider;
    let env: TestEnvironment;
    let subscriber: Redis | undefined;
    const clients: GatewayClient[] = [];

    beforeAll(async () => {
      idp = await TestIdentityProvider.start();
      env = await TestEnvironment.create(idp.env);
    });
    afterAll(async () => {
      await GatewayClient.terminateAll(clients);
      subscriber?.disconnect();
      await env?.close();
      await idp?.close();
    });

    async function spawnApi(extra: Record<string, string> = {}): Promise<{ role: SpawnedRole; url: string }> {
      const port = await freePort();
      const role = env.spawnRole('main', { APP_ROLE: 'api', PORT: String(port), ...extra });
      await role.waitForOutput(/api listening on/, 60_000);
      return { role, url: `http://127.0.0.1:${port}` };
    }

    it('the recipient connected to another instance receives message.created exactly once, from the durable copy', async () => {
      await startWorker(env);
      const b = await spawnApi();
      // A's Redis is a port nobody listens on: A commits to PostgreSQL, but its fast-path publish cannot leave the
      // process, as if A had died between commit and publish. A is killed as soon as it has answered.
      const a = await spawnApi({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
      await request(a.url).get('/health/live').expect(200);
      const readiness = await request(a.url).get('/health/ready');
      expect(readiness.status).toBe(503);
      expect(readiness.body).toMatchObject({ checks: { redis: 'down', database: 'up' } });

      const user = async (sub: string, name: string): Promise<LoggedInUser> => {
        const u = await login(b.url, idp, { sub, name, email: `${name.toLowerCase()}.fault-backbone@example.com` });
        await raiseToEnterprise(b.url, u);
        return u;
      };
      const contact = async (owner: LoggedInUser, name: string): Promise<string> =>
        (
          await request(b.url)
            .post('/v1/contacts')
            .set(owner.auth)
            .send({ name, email: `${name.toLowerCase()}.fault-backbone@example.com` })
            .expect(201)
        ).body.id as string;
      const alice = await user('uid-fault-backbone-alice', 'Alice');
      const bob = await user('uid-fault-backbone-bob', 'Bob');
      const bobAtAlice = await contact(alice, 'Bob');
      const aliceAtBob = await contact(bob, 'Alice');

      // Every publication on bob's channel, on the Redis that B and the worker share.
      const published: string[] = [];
      subscriber = new Redis(env.env.REDIS_URL);
      subscriber.on('message', (_channel: string, message: string) => {
        const event = JSON.parse(message) as { type: string; data: { id?: string } };
        if (event.type === 'message.created' && event.data.id) published.push(event.data.id);
      });
      await subscriber.subscribe(userChannel(env.env.REDIS_PREFIX, bob.id));

      const recipient = await GatewayClient.open(b.url, bob.token);
      clients.push(recipient);
      const senderElsewhere = await GatewayClient.open(b.url, alice.token);
      clients.push(senderElsewhere);

      const sent = await request(a.url)
        .post('/v1/messages')
        .set(alice.auth)
        .send({ recipient_id: bobAtAlice, content: 'sent through an instance about to die' })
        .timeout(5_000);
      const committedAt = Date.now();
      await a.role.kill();
      expect(`${sent.status} ${sent.text.slice(0, 300)}`).toMatch(/^201 /);
      expect((await a.role.exited).signal).toBe('SIGKILL');
      const id = sent.body.id as string;

      const frame = await recipient.next('message.created', (f) => f.data.id === id, 10_000);
      const arrivedAfter = Date.now() - committedAt;
      expect(frame.data).toMatchObject({
        id,
        direction: 'inbound',
        sender_contact_id: aliceAtBob,
        content: 'sent through an instance about to die',
      });
      // The durable copy, not a fast path: it went out once the event was due.
      expect(arrivedAfter).toBeGreaterThanOrEqual(DURABLE_COPY_DELAY_MS / 2);
      await sleep(2_000);
      const frames = (client: GatewayClient) => client.seen.filter((f) => f.type === 'message.created' && f.data.id === id);
      expect(frames(recipient)).toHaveLength(1);
      expect(frames(senderElsewhere)).toHaveLength(1);
      expect(frames(senderElsewhere)[0].data).toMatchObject({ id, direction: 'outbound', recipient_id: bobAtAlice });
      // One publication on bob's channel: the worker's durable copy; nothing from A reached Redis.
      expect(published.filter((p) => p === id)).toHaveLength(1);
      console.log(`api A killed after its 201; the recipient on B got message.created once, ${arrivedAfter} ms after the commit`);
    });
  });
});
