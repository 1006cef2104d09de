import { INestApplicationContext } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { QUEUES } from '../../src/infra/queue/queues';
import { TestIdentityProvider } from '../support/identity-provider';
import { TestEnvironment } from '../support/harness';
import { ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, publishVersion, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';

const described = (type: string, description: string, extra: Record<string, unknown> = {}) => ({ type, description, ...extra });

/** One state capability on the home widgets, polled every second once polling runs, with a default param (widget params). */
function meterCapabilities(): unknown[] {
  return [
    {
      type: 'state',
      name: 'meter',
      description: 'Current reading of the meter.',
      refreshInterval: 1,
      schema: {
        type: 'object',
        properties: { unit: described('string', 'Unit of the reading.', { enum: ['kwh'], default: 'kwh' }) },
        additionalProperties: false,
      },
      responseSchema: {
        type: 'object',
        properties: { available: described('number', 'Reading.'), currency: described('string', 'Unit code.') },
      },
      surfaceGuidance: { intent: 'ambient_context', placement: ['home_widgets'], preferredComponents: ['stat_row'] },
    },
  ];
}

/** Version 2: the same capabilities and a new state capability (no new mode: the installs follow it without consent). */
function meterCapabilitiesV2(): unknown[] {
  const [meter] = meterCapabilities() as Array<Record<string, unknown>>;
  return [meter, { ...meter, name: 'meter_peak', description: 'Peak reading of the day.' }];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * An install fetches its first state at once (issue 24): the install commits
 * a `poll-install` job through the job outbox, the worker polls that
 * install's state capabilities, and the widget has data within seconds
 * without any tick of the poller; the repeating tick keeps running across
 * worker restarts beside those jobs; an install that rolls back polls nothing.
 */
describe('an install fetches its first state at once', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let dataSource: DataSource;
  let runtimeBridgeQueue: Queue;
  let worker: INestApplicationContext;
  let user: LoggedInUser;
  let packageId: string;
  let versionId: string;
  let appAuth: { authorization: string };
  let installId: string;

  const pollsOf = (userId: string) =>
    runtime.requestsTo('/capabilities/meter/execute').filter((r) => r.headers['x-service-user-id'] === userId);
  const meterWidget = async (who: LoggedInUser) =>
    (
      (await request(url).get('/v1/surfaces/home_widgets').set(who.auth).expect(200)).body.components as Array<Record<string, unknown>>
    ).find((c) => (c.capability as { name: string }).name === 'meter');

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start({ capabilities: meterCapabilitiesV2() });
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env, RUNTIME_TIMEOUT_MS: '3000' });
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    runtimeBridgeQueue = api.app.get(getQueueToken(QUEUES.runtimeBridge), { strict: false });
    // The tick runs hourly (once at start, before any install): a poll seconds after an install is the install's own.
    worker = await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' } });
    const developer = await onboardDeveloper(url, smtp, 'meter@example.com');
    const app = await registerApp(url, developer);
    appAuth = { authorization: `Bearer ${await appToken(url, app)}` };
    user = await login(url, idp, { sub: 'uid-first-state', name: 'First State', email: 'first-state@example.com' });
    ({ packageId, versionId } = await publishPackage(url, appAuth, {
      appId: app.id,
      name: 'Meter',
      slug: 'meter',
      description: 'Meter readings',
      riskTier: 'data_only',
      runtimeUrl: runtime.url,
      capabilities: meterCapabilities(),
    }));
  }, 90_000);

  afterAll(async () => {
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  it('shows the widget data within seconds of the install, from exactly one poll and no tick', async () => {
    runtime.clearRequests();
    installId = (await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201)).body.id;
    const widget = await waitFor(
      async () => {
        const found = await meterWidget(user);
        return found?.data ? found : undefined;
      },
      { what: 'the first state of the new install', timeoutMs: 10_000 },
    );
    expect(widget).toMatchObject({ params: { unit: 'kwh' }, data: { available: 1520.75, currency: 'EUR' }, stale: false });
    // The refreshInterval (1 s) passes twice: with the tick hourly, nothing polls again.
    await sleep(2_200);
    const polls = pollsOf(user.id);
    expect(polls).toHaveLength(1);
    expect(polls[0].body).toMatchObject({ capability: 'meter', params: { unit: 'kwh' } });
    const traces = await dataSource.query(`SELECT trigger, outcome FROM capability_executions WHERE install_id = $1`, [installId]);
    expect(traces).toEqual([{ trigger: 'poll', outcome: 'ok' }]);
    // The job the install committed ran under its own name and id (not as a tick).
    const job = await runtimeBridgeQueue.getJob(`poll-install-${installId}-${versionId}`);
    expect(job).toMatchObject({ name: 'poll-install', data: { installId } });
    expect(await job!.getState()).toBe('completed');
    // Settled: its outbox row is gone once the job completed.
    await waitFor(
      async () =>
        Number((await dataSource.query(`SELECT count(*)::int AS n FROM job_outbox WHERE name = 'poll-install'`))[0].n) === 0 || undefined,
      { what: 'the outbox row settled', timeoutMs: 10_000 },
    );
  });

  it('records no job for an install that rolls back, and polls nothing for it', async () => {
    const doomed = await login(url, idp, { sub: 'uid-first-state-2', name: 'Rolled Back', email: 'rolled-back@example.com' });
    // A deferred constraint trigger fails this user's install at commit: everything its transaction wrote rolls back.
    await dataSource.query(`CREATE FUNCTION fail_install() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.user_id = '${doomed.id}' THEN RAISE EXCEPTION 'install refused by the test'; END IF; RETURN NEW; END $$`);
    await dataSource.query(`CREATE CONSTRAINT TRIGGER fail_install AFTER INSERT ON installs DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION fail_install()`);
    try {
      runtime.clearRequests();
      const refused = await request(url).post('/v1/installs').set(doomed.auth).send({ package_id: packageId });
      expect(refused.status).toBe(500);
      expect(refused.body.error).toMatchObject({ status: 500 });
    } finally {
      await dataSource.query(`DROP TRIGGER fail_install ON installs; DROP FUNCTION fail_install()`);
    }
    expect(await dataSource.query(`SELECT id FROM installs WHERE user_id = $1`, [doomed.id])).toEqual([]);
    const orphans = await dataSource.query(
      `SELECT id FROM job_outbox WHERE name = 'poll-install' AND NOT EXISTS (SELECT 1 FROM installs i WHERE i.id = job_outbox.data->>'installId')`,
    );
    expect(orphans).toEqual([]);
    await sleep(1_500);
    expect(pollsOf(doomed.id)).toHaveLength(0);
    expect(await meterWidget(doomed)).toBeUndefined();
  });

  it('polls the state capability a followed version adds at once, without a tick', async () => {
    runtime.clearRequests();
    const created = await request(url)
      .post(`/v1/providers/packages/${packageId}/versions`)
      .set(appAuth)
      .send({ version: '2.0.0', capabilities: meterCapabilitiesV2(), runtimeUrl: runtime.url })
      .expect(201);
    await publishVersion(url, appAuth, packageId, created.body.id);
    const peakPolls = () =>
      runtime.requestsTo('/capabilities/meter_peak/execute').filter((r) => r.headers['x-service-user-id'] === user.id);
    await waitFor(() => peakPolls().length >= 1 || undefined, { what: 'the new capability’s first poll', timeoutMs: 15_000 });
    await sleep(1_500);
    expect(peakPolls()).toHaveLength(1);
    const job = await runtimeBridgeQueue.getJob(`poll-install-${installId}-${created.body.id}`);
    expect(job).toMatchObject({ name: 'poll-install', data: { installId } });
  }, 60_000);

  it('keeps the scheduled tick running after worker restarts with another tick, beside install polls, even when a tick runs late', async () => {
    // Restart with a fast tick: the first install's capability (1 s interval) is due, and only a tick polls it now.
    await worker.close();
    runtime.clearRequests();
    worker = await env.startWorker({ env: { RUNTIME_TICK_MS: '500' } });
    // The scheduler of the hourly worker is not carried over: its phase within the hour must not stay with the new
    // period (BullMQ aligned a late tick to it, and the ticks went silent for up to an hour).
    const scheduler = await runtimeBridgeQueue.getJobScheduler('state-poll-tick.every');
    expect(Number(scheduler?.every)).toBe(500);
    expect(Number(scheduler?.offset ?? 0)).toBeLessThan(500);
    // Slow polls make ticks run late by more than a period (the case that silenced them).
    runtime.slowDelayMs = 1_200;
    await runtime.behave('slow');
    try {
      await waitFor(() => pollsOf(user.id).length >= 2 || undefined, { what: 'slow scheduled polls after a restart', timeoutMs: 15_000 });
    } finally {
      await runtime.behave('conforming');
    }
    const polled = pollsOf(user.id).length;
    await waitFor(() => pollsOf(user.id).length >= polled + 2 || undefined, {
      what: 'scheduled polls going on after late ticks',
      timeoutMs: 15_000,
    });

    // An install (its poll-install job beside the scheduler's ticks), then a second restart: the ticks go on.
    const second = await login(url, idp, { sub: 'uid-first-state-3', name: 'Second', email: 'second-state@example.com' });
    await request(url).post('/v1/installs').set(second.auth).send({ package_id: packageId }).expect(201);
    await waitFor(() => pollsOf(second.id).length >= 1 || undefined, { what: 'the second install’s first poll', timeoutMs: 10_000 });
    await worker.close();
    runtime.clearRequests();
    worker = await env.startWorker({ env: { RUNTIME_TICK_MS: '500' } });
    await waitFor(() => (pollsOf(user.id).length >= 2 && pollsOf(second.id).length >= 2) || undefined, {
      what: 'scheduled polls of both installs after a second restart',
      timeoutMs: 15_000,
    });
  }, 90_000);
});
