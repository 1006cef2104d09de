import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { PLATFORM_CHECK_TTL_MS } from '../../src/modules/providers/auth/platform-standings';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { appToken, onboardDeveloper, OnboardedDeveloper, registerApp, RegisteredApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { waitFor } from '../support/wait-for';

/**
 * What an app token stands on is remembered by each api instance (PlatformStandings) and dropped when it changes:
 * at once on the instance that made the change, and on every other one by the `platform_auth_changed` triggers'
 * notifications, well before the entry would time out. Two api instances share one database here.
 */
describe('app token checks remembered by each api instance', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let a: { app: NestFastifyApplication; url: string };
  let b: { app: NestFastifyApplication; url: string };
  /** Well below the time a remembered check stands, so only the notification can explain a refusal in time. */
  const PROPAGATION_MS = Math.min(2_000, PLATFORM_CHECK_TTL_MS / 4);
  let developers = 0;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url });
    a = await env.startApi({ role: 'all' }); // with the worker, which sends the verification mail
    b = await env.startApi();
  });
  afterAll(async () => {
    await env.close();
    await smtp.close();
  });

  /** A developer with an app whose token both instances have checked (and remember). */
  async function seenByBoth(): Promise<{ developer: OnboardedDeveloper; app: RegisteredApp; auth: { authorization: string } }> {
    developers += 1;
    const developer = await onboardDeveloper(a.url, smtp, `standing${developers}@example.com`);
    const app = await registerApp(a.url, developer);
    const auth = { authorization: `Bearer ${await appToken(a.url, app)}` };
    // Twice on each: the first lookup starts the instance's listening connection, later ones are remembered.
    for (let round = 0; round < 2; round += 1)
      for (const target of [a.url, b.url]) await request(target).get(`/v1/providers/apps/${app.id}`).set(auth).expect(200);
    return { developer, app, auth };
  }

  const answeredOn = (target: string, path: string, auth: { authorization: string }, status: number) =>
    waitFor(async () => (await request(target).get(path).set(auth)).status === status, {
      timeoutMs: PROPAGATION_MS,
      what: `${status} from ${target}${path}`,
    });

  it('refuses the tokens of a suspended developer at once where suspended, on the other instance within moments, and takes them back on reinstatement', async () => {
    const { developer, app, auth } = await seenByBoth();
    await request(a.url)
      .post(`/v1/operator/developers/${developer.id}/suspend`)
      .set('authorization', `Bearer ${OPERATOR_TOKEN}`)
      .send({ reason: 'abuse' })
      .expect(200);
    const refused = await request(a.url).get(`/v1/providers/apps/${app.id}`).set(auth).expect(403);
    expect(refused.body.code ?? refused.body.type).toMatch(/account_suspended/);
    await answeredOn(b.url, `/v1/providers/apps/${app.id}`, auth, 403);

    await request(b.url)
      .post(`/v1/operator/developers/${developer.id}/reinstate`)
      .set('authorization', `Bearer ${OPERATOR_TOKEN}`)
      .expect(200);
    await request(b.url).get(`/v1/providers/apps/${app.id}`).set(auth).expect(200);
    await answeredOn(a.url, `/v1/providers/apps/${app.id}`, auth, 200);
  });

  it('ends the tokens of a rotated secret (no grace) at once where rotated, and on the other instance within moments', async () => {
    const { developer, app, auth } = await seenByBoth();
    await request(b.url).post(`/v1/providers/apps/${app.id}/secret`).set(developer.auth).send({}).expect(200);
    await request(b.url).get(`/v1/providers/apps/${app.id}`).set(auth).expect(401);
    await answeredOn(a.url, `/v1/providers/apps/${app.id}`, auth, 401);
  });

  it('trusts a token of the previous secret no longer than its grace period', async () => {
    const { developer, app, auth } = await seenByBoth();
    await request(a.url).post(`/v1/providers/apps/${app.id}/secret`).set(developer.auth).send({ grace_period_seconds: 2 }).expect(200);
    for (const target of [a.url, b.url]) await request(target).get(`/v1/providers/apps/${app.id}`).set(auth).expect(200);
    // Nothing is announced when a grace period runs out: each instance's entry ends with it.
    await waitFor(
      async () => {
        const statuses = await Promise.all(
          [a.url, b.url].map(async (t) => (await request(t).get(`/v1/providers/apps/${app.id}`).set(auth)).status),
        );
        return statuses.every((s) => s === 401);
      },
      { timeoutMs: 2_000 + PROPAGATION_MS, what: 'the old generation refused on both instances after its grace' },
    );
  });

  it('applies narrower app scopes at once where changed, and on the other instance within moments', async () => {
    const { developer, app, auth } = await seenByBoth();
    await request(a.url).get('/v1/providers/packages').set(auth).expect(200);
    await request(b.url).get('/v1/providers/packages').set(auth).expect(200);
    await request(a.url)
      .patch(`/v1/providers/apps/${app.id}`)
      .set(developer.auth)
      .send({ scopes: ['apps:read'] })
      .expect(200);
    const refused = await request(a.url).get('/v1/providers/packages').set(auth).expect(403);
    expect(JSON.stringify(refused.body)).toMatch(/insufficient_scope/);
    await answeredOn(b.url, '/v1/providers/packages', auth, 403);
  });

  it('refuses the tokens of a developer deleted outside the service on every instance within moments', async () => {
    const { developer, app, auth } = await seenByBoth();
    const db = a.app.get<DataSource>(getDataSourceToken());
    // As an operator in psql would: the service is not told, only the triggers speak.
    await db.query(`DELETE FROM apps WHERE developer_id = $1`, [developer.id]);
    await answeredOn(a.url, `/v1/providers/apps/${app.id}`, auth, 401);
    await answeredOn(b.url, `/v1/providers/apps/${app.id}`, auth, 401);
  });
});
