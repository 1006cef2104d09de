import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { afterCommit, afterTransaction } from '../../src/infra/database/after-transaction';
import { INSTALL_TARGET_TTL_MS, InstallTargets } from '../../src/modules/marketplace/install-targets';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, publishPackage, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';

/**
 * What the bridge reads to reach a runtime for an install (InstallTargets) is
 * remembered by each api instance and dropped when it changes: at once on the
 * instance that made the change (the repositories forget after their commit),
 * and on every other one by the `install_targets_changed` triggers'
 * notifications, well before an entry would time out. Two api instances share
 * one database here.
 */
describe('install targets remembered by each api instance', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let a: { app: NestFastifyApplication; url: string };
  let b: { app: NestFastifyApplication; url: string };
  let dataSource: DataSource;
  let packageId: string;
  let developerId: string;
  /** Well below the time a remembered target stands, so only the notification can explain a refusal in time. */
  const PROPAGATION_MS = Math.min(2_000, INSTALL_TARGET_TTL_MS / 4);
  let users = 0;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start({ capabilities: goodPackageCapabilities() });
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
    a = await env.startApi({ role: 'all' }); // with the worker, which sends the verification mail
    b = await env.startApi();
    dataSource = a.app.get(getDataSourceToken());
    const developer = await onboardDeveloper(a.url, smtp, 'targets@example.com');
    developerId = developer.id;
    const app = await registerApp(a.url, developer);
    const appAuth = { authorization: `Bearer ${await appToken(a.url, app)}` };
    ({ packageId } = await publishPackage(a.url, appAuth, {
      appId: app.id,
      name: 'Targets Bank',
      slug: 'targets-bank',
      description: 'Balances',
      riskTier: 'data_only',
      runtimeUrl: runtime.url,
      capabilities: goodPackageCapabilities(),
    }));
  }, 90_000);
  afterAll(async () => {
    await env?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  const balance = (target: string, user: LoggedInUser) =>
    request(target)
      .post(`/v1/providers/packages/${packageId}/capabilities/balance/execute`)
      .set(user.auth)
      .send({ params: { account: 'checking' } });

  /** A user with an install of the package that both instances have called through (and remember). */
  async function seenByBoth(): Promise<{ user: LoggedInUser; installId: string }> {
    users += 1;
    const user = await login(a.url, idp, { sub: `uid-targets-${users}`, name: `Target ${users}`, email: `target${users}@example.com` });
    const installId = (await request(a.url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201)).body
      .id as string;
    // Twice on each: the first lookup starts the instance's listening connection, later ones are remembered.
    for (let round = 0; round < 2; round += 1) for (const target of [a.url, b.url]) expect((await balance(target, user)).status).toBe(200);
    return { user, installId };
  }

  /** The problem type of a problem document (this is a provider platform route). */
  const codeOf = (body: unknown) => (body as { type: string }).type;
  /** What a user without an active install of the package is answered. */
  let refusal: { status: number; code: string };
  beforeAll(async () => {
    const stranger = await login(a.url, idp, { sub: 'uid-targets-stranger', name: 'Stranger', email: 'stranger@example.com' });
    const res = await balance(a.url, stranger);
    refusal = { status: res.status, code: codeOf(res.body) };
    expect(refusal.code).toMatch(/#not_found$/);
    expect(refusal.status).toBeGreaterThanOrEqual(400);
  });

  const refusedOn = (target: string, user: LoggedInUser) =>
    waitFor(async () => ((await balance(target, user)).status === refusal.status ? true : undefined), {
      timeoutMs: PROPAGATION_MS,
      what: `the refusal from ${target}`,
    });

  it('refuses an uninstalled install at once where uninstalled, and on the other instance within moments', async () => {
    const { user, installId } = await seenByBoth();
    // Remembered: the same (frozen) answer twice, without asking PostgreSQL.
    const targets = a.app.get(InstallTargets);
    const remembered = await targets.byInstall(installId);
    expect(remembered).toMatchObject({ install_id: installId, package_id: packageId });
    expect(await targets.byInstall(installId)).toBe(remembered);
    expect(Object.isFrozen(remembered)).toBe(true);

    await request(a.url).delete(`/v1/installs/${installId}`).set(user.auth).expect(200);
    const refused = await balance(a.url, user);
    expect({ status: refused.status, code: codeOf(refused.body) }).toEqual(refusal);
    await refusedOn(b.url, user);
  });

  it('sees an install ended outside the service (psql) on both instances within moments, by the notification alone', async () => {
    const { user, installId } = await seenByBoth();
    await dataSource.query(
      `UPDATE installs SET status = 'removed', removed_reason = 'user_uninstalled', removed_at = now() WHERE id = $1`,
      [installId],
    );
    await refusedOn(a.url, user);
    await refusedOn(b.url, user);
  });

  it('keeps answering after a change that rolled back', async () => {
    const { user, installId } = await seenByBoth();
    await dataSource
      .transaction(async (tx) => {
        await tx.query(`UPDATE installs SET status = 'removed' WHERE id = $1`, [installId]);
        throw new Error('rolled back on purpose');
      })
      .catch(() => undefined);
    for (const target of [a.url, b.url]) expect((await balance(target, user)).status).toBe(200);
  });

  it('stops calls of a suspended package and of a suspended developer on both instances, and takes them back on reinstatement', async () => {
    const { user } = await seenByBoth();
    const operator = { authorization: `Bearer ${OPERATOR_TOKEN}` };
    await request(b.url)
      .post(`/v1/operator/packages/${packageId}/suspend`)
      .set(operator)
      .send({ reason: 'policy_violation', message: 'Checked by a test.', remediation: 'Reinstated by the test.' })
      .expect(200);
    const suspended = await balance(b.url, user);
    expect(suspended.status).not.toBe(200);
    await waitFor(async () => ((await balance(a.url, user)).status === suspended.status ? true : undefined), {
      timeoutMs: PROPAGATION_MS,
      what: 'the suspension on the other instance',
    });
    await request(b.url).post(`/v1/operator/packages/${packageId}/reinstate`).set(operator).expect(200);
    expect((await balance(b.url, user)).status).toBe(200);
    await waitFor(async () => ((await balance(a.url, user)).status === 200 ? true : undefined), {
      timeoutMs: PROPAGATION_MS,
      what: 'the reinstatement on the other instance',
    });

    await request(a.url).post(`/v1/operator/developers/${developerId}/suspend`).set(operator).send({ reason: 'abuse' }).expect(200);
    const developerSuspended = await balance(a.url, user);
    expect(developerSuspended.status).not.toBe(200);
    await waitFor(async () => ((await balance(b.url, user)).status === developerSuspended.status ? true : undefined), {
      timeoutMs: PROPAGATION_MS,
      what: 'the developer suspension on the other instance',
    });
    await request(a.url).post(`/v1/operator/developers/${developerId}/reinstate`).set(operator).expect(200);
    expect((await balance(a.url, user)).status).toBe(200);
  });

  it('runs work after the outermost commit or rollback (afterCommit: the commit only), never at a savepoint, and at once without a transaction', async () => {
    const ran: string[] = [];
    await dataSource.transaction(async (tx) => {
      afterTransaction(tx, () => ran.push('outer'));
      await tx.transaction(async (nested) => {
        afterTransaction(nested, () => ran.push('nested'));
        await nested.query('SELECT 1');
      });
      // The savepoint was released: nothing ran yet.
      expect(ran).toEqual([]);
    });
    expect(ran).toEqual(['outer', 'nested']);

    ran.length = 0;
    await dataSource
      .transaction(async (tx) => {
        afterTransaction(tx, () => ran.push('rolled back'));
        afterCommit(tx, () => ran.push('committed only'));
        throw new Error('rolled back on purpose');
      })
      .catch(() => undefined);
    expect(ran).toEqual(['rolled back']);

    // afterCommit: only after the outermost commit, also when registered in a savepoint that was released.
    ran.length = 0;
    await dataSource.transaction(async (tx) => {
      await tx.transaction(async (nested) => {
        afterCommit(nested, () => ran.push('committed'));
        await nested.query('SELECT 1');
      });
      expect(ran).toEqual([]);
    });
    expect(ran).toEqual(['committed']);

    ran.length = 0;
    afterTransaction(undefined, () => ran.push('no transaction'));
    afterTransaction(dataSource.manager, () => ran.push('manager'));
    expect(ran).toEqual(['no transaction', 'manager']);
  });
});
