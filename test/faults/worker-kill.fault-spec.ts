import { getDataSourceToken } from '@nestjs/typeorm';
import Redis from 'ioredis';
import request from 'supertest';
import { DataSource, QueryRunner } from 'typeorm';
import { SpawnedRole, TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';

const USERS = 6;
const RUNS = 3;

/**
 * Issue 10, fault tests: the worker process is killed with SIGKILL while soul
 * exports and full conformance runs are in flight, and a new worker is started.
 * BullMQ's stalled-job check (default 30 s lock, 30 s interval; the exports
 * and conformance processors do not shorten them) hands the killed worker's
 * active jobs to the new one; every export ends `ready` exactly once and every
 * run `completed`. Recovery takes about 60 s: up to 30 s until the killed
 * worker's last check stops throttling new ones, then the new worker's first
 * check marks the orphaned jobs and its next, 30 s later, moves them to wait.
 * Needs `npx nest build` (dist/worker.js).
 */
jest.setTimeout(240_000);

describe('exports and conformance runs survive a killed worker', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let dataSource: DataSource;
  let auth: { authorization: string };
  let appId: string;
  let locker: QueryRunner | undefined;

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    // Onboarding mails go through the worker: a short-lived one, stopped gracefully before the test.
    const mailer = env.spawnRole('worker');
    await mailer.waitForOutput(/processing queues: .*mail/);
    const developer = await onboardDeveloper(url, smtp, 'fault-worker-kill@example.com');
    mailer.child.kill('SIGTERM');
    await mailer.exited;
    const app = await registerApp(url, developer);
    appId = app.id;
    auth = { authorization: `Bearer ${await appToken(url, app)}` };
  });
  afterAll(async () => {
    if (locker && !locker.isReleased) {
      if (locker.isTransactionActive) await locker.rollbackTransaction().catch(() => undefined);
      await locker.release();
    }
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  async function createPackage(n: number): Promise<{ id: string; versionId: string }> {
    const res = await request(url)
      .post('/v1/providers/packages')
      .set(auth)
      .send({
        appId,
        name: `Crash Finance ${n}`,
        slug: `crash-finance-${n}`,
        description: 'Balances, transfers and a live ticker',
        riskTier: 'action_capable',
        runtimeUrl: runtime.url,
        capabilities: goodPackageCapabilities(),
      })
      .expect(201);
    return { id: res.body.id as string, versionId: res.body.versions[0].id as string };
  }

  it('finishes every export exactly once and every full run after SIGKILL and a new worker', async () => {
    // Exports: one per user. The test holds row locks on every export row, so the
    // first build the worker takes blocks on its final UPDATE: in flight, holding a BullMQ lock.
    const users: LoggedInUser[] = [];
    for (let i = 0; i < USERS; i++) {
      const user = await login(url, idp, { sub: `uid-crash-${i}`, name: `Crash ${i}`, email: `crash-${i}@example.com` });
      await dataSource.query(`UPDATE users SET tier = 'pro' WHERE id = $1`, [user.id]);
      users.push(user);
    }
    const exportIds: string[] = [];
    for (const user of users) {
      const res = await request(url).post('/v1/soul/export').set(user.auth).send({ format: 'json' }).expect(202);
      exportIds.push(res.body.id as string);
    }
    locker = dataSource.createQueryRunner();
    await locker.connect();
    await locker.startTransaction();
    await locker.query(`SELECT id FROM exports WHERE id = ANY($1) FOR UPDATE`, [exportIds]);

    // Conformance: a slow runtime keeps the full runs (concurrency 2) busy calling it.
    runtime.slowDelayMs = 1_500;
    await runtime.behave('slow');
    const runIds: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const pkg = await createPackage(i);
      const queued = await request(url)
        .post(`/v1/providers/packages/${pkg.id}/versions/${pkg.versionId}/validate?full=true`)
        .set(auth)
        .expect(202);
      runIds.push(queued.body.id as string);
    }
    runtime.clearRequests();

    const first: SpawnedRole = env.spawnRole('worker');
    await first.waitForOutput(/processing queues: .*conformance/);
    // Both kinds of job are in flight: an export build waiting on the row lock, runs calling the runtime.
    await waitFor(
      async () => {
        const [{ n }]: Array<{ n: string }> = await dataSource.query(
          `SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'UPDATE "exports"%'`,
        );
        return Number(n) >= 1 && runtime.requests.length >= 1 ? true : undefined;
      },
      { what: 'an export build blocked and conformance calls at the runtime', timeoutMs: 20_000, intervalMs: 50 },
    );
    const running: Array<{ id: string }> = await dataSource.query(
      `SELECT id FROM conformance_runs WHERE id = ANY($1) AND status = 'running'`,
      [runIds],
    );
    expect(running.length).toBeGreaterThanOrEqual(1);

    await first.kill();
    const killedAt = Date.now();
    expect((await first.exited).signal).toBe('SIGKILL');
    // A backend blocked on a lock does not notice that its client died until it writes to it, and would
    // then commit the dead worker's UPDATE; end those sessions as PostgreSQL eventually does, then release
    // the rows and make the runtime fast.
    await dataSource.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'UPDATE "exports"%'`,
    );
    await locker.rollbackTransaction();
    await locker.release();
    await runtime.behave('conforming');
    const before: Array<{ status: string }> = await dataSource.query(`SELECT status FROM exports WHERE id = ANY($1)`, [exportIds]);
    expect(before.every((r) => r.status === 'pending')).toBe(true);

    // BullMQ runs one stalled check per queue per interval, whoever runs it; the killed worker's last check
    // (its `stalled-check` key) would make the new worker skip its first. Start the new worker once that
    // throttle has lapsed, so its first check marks the orphaned jobs and the next (30 s) moves them to wait.
    const probe = new Redis(env.env.REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      await waitFor(
        async () => {
          const ttls = await Promise.all(
            ['exports', 'conformance'].map((queue) => probe.pttl(`{${env.env.REDIS_PREFIX}}:bull:${queue}:stalled-check`)),
          );
          return ttls.every((ttl) => ttl < 0) ? true : undefined;
        },
        { what: 'the killed worker’s stalled-check throttle to lapse', timeoutMs: 35_000, intervalMs: 100 },
      );
    } finally {
      probe.disconnect();
    }
    const second = env.spawnRole('worker');
    await second.waitForOutput(/processing queues: .*conformance/);

    const exports = await waitFor(
      async () => {
        const rows: Array<{ id: string; user_id: string; status: string; content: string | null }> = await dataSource.query(
          `SELECT id, user_id, status, content FROM exports WHERE user_id = ANY($1)`,
          [users.map((u) => u.id)],
        );
        return rows.length === USERS && rows.every((r) => r.status === 'ready') ? rows : undefined;
      },
      { what: 'every export ready', timeoutMs: 110_000, intervalMs: 250 },
    );
    const exportsReadyAfter = Math.round((Date.now() - killedAt) / 1000);
    // One row per request, for the user who asked, with the content present.
    expect(new Set(exports.map((r) => r.id))).toEqual(new Set(exportIds));
    expect(new Set(exports.map((r) => r.user_id)).size).toBe(USERS);
    for (const row of exports) {
      expect(row.content).toBeTruthy();
      expect(JSON.parse(row.content as string)).toEqual(expect.any(Object));
    }
    for (const [i, user] of users.entries()) {
      const res = await request(url).get(`/v1/exports/${exportIds[i]}`).set(user.auth).expect(200);
      expect(res.text.length).toBeGreaterThan(0);
    }

    const runs = await waitFor(
      async () => {
        const rows: Array<{ id: string; status: string; score: number | null; completed_at: Date | null }> = await dataSource.query(
          `SELECT id, status, score, completed_at FROM conformance_runs WHERE id = ANY($1)`,
          [runIds],
        );
        return rows.length === RUNS && rows.every((r) => r.status !== 'queued' && r.status !== 'running') ? rows : undefined;
      },
      { what: 'every conformance run settled', timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(runs.map((r) => ({ id: r.id, status: r.status }))).toEqual(
      expect.arrayContaining(runIds.map((id) => ({ id, status: 'completed' }))),
    );
    for (const run of runs) expect(run.score).toEqual(expect.any(Number));
    for (const id of runIds) {
      const res = await request(url).get(`/v1/providers/conformance/${id}`).set(auth).expect(200);
      expect(res.body.status).toBe('completed');
    }
    console.log(
      `after SIGKILL: ${USERS} exports ready in ${exportsReadyAfter} s, ${RUNS} full runs completed in ${Math.round((Date.now() - killedAt) / 1000)} s`,
    );
  });
});
