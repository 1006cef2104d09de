import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { RetentionService } from '../../src/modules/system/retention.service';
import { factories } from '../support/factories';
import { TestIdentityProvider } from '../support/identity-provider';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { Issuer, errors as oidcErrors, generators } from 'openid-client';
import { appToken, onboardDeveloper, RegisteredApp, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';

const problemType = (code: string) => `https://docs.example.com/developers/errors#${code}`;
const operator = { authorization: `Bearer ${OPERATOR_TOKEN}` };

/**
 * Onboarding steps four to seven against a real HTTPS provider runtime on
 * loopback (certificate from the local test CA), then discovery and installs.
 */
describe('package lifecycle: conformance, submission, review, publication, marketplace, installs, suspension', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let dataSource: DataSource;
  let retention: RetentionService;
  let auth: { authorization: string };
  let appId: string;
  let app: RegisteredApp;
  let user: LoggedInUser;
  let slugs = 0;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
    const api = await env.startApi();
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    retention = api.app.get(RetentionService);
    await env.startWorker();
    const developer = await onboardDeveloper(url, smtp, 'lifecycle@example.com');
    app = await registerApp(url, developer);
    appId = app.id;
    auth = { authorization: `Bearer ${await appToken(url, app)}` };
    user = await login(url, idp, { sub: 'uid-shopper', name: 'Shopper', email: 'shopper@example.com' });
  });
  afterAll(async () => {
    await env.close();
    await runtime.close();
    await idp.close();
    await smtp.close();
  });
  afterEach(() => runtime.behave('conforming'));

  const readOnlyCapabilities = () => (goodPackageCapabilities() as Array<{ type: string }>).filter((c) => c.type !== 'action');

  async function createPackage(riskTier: string, capabilities: unknown[] = goodPackageCapabilities()) {
    slugs += 1;
    const res = await request(url)
      .post('/v1/providers/packages')
      .set(auth)
      .send({
        appId,
        name: `Acme Finance ${slugs}`,
        slug: `acme-finance-${slugs}`,
        description: 'Balances, transfers and a live ticker',
        riskTier,
        runtimeUrl: runtime.url,
        capabilities,
      })
      .expect(201);
    return { id: res.body.id as string, slug: res.body.slug as string, versionId: res.body.versions[0].id as string };
  }

  const submit = (pkg: { id: string; versionId: string }) =>
    request(url).post(`/v1/providers/packages/manage/${pkg.id}/versions/${pkg.versionId}/submit`).set(auth);
  const publish = (pkg: { id: string; versionId: string }) =>
    request(url).post(`/v1/providers/packages/manage/${pkg.id}/versions/${pkg.versionId}/publish`).set(auth);
  const eventsOf = (type: string, packageId: string) =>
    dataSource.query(`SELECT payload FROM events WHERE type = $1 AND payload->'data'->>'package_id' = $2 ORDER BY created_at`, [
      type,
      packageId,
    ]);

  it('validates locally with schema, contracts and documentation, without calling the runtime', async () => {
    const pkg = await createPackage('data_only', readOnlyCapabilities());
    runtime.clearRequests();
    const res = await request(url).post(`/v1/providers/packages/${pkg.id}/versions/${pkg.versionId}/validate`).set(auth).expect(200);
    expect(res.body).toMatchObject({ id: expect.stringMatching(/^conf_/), score: expect.any(Number), passed: true, full: false });
    expect(Object.keys(res.body.dimensions).sort()).toEqual([
      'contracts',
      'documentation',
      'error_handling',
      'performance',
      'schema',
      'security',
    ]);
    expect(runtime.requests).toHaveLength(0);
  });

  it('runs the full suite as a job and reports it at the conformance address; a good runtime reaches at least 80', async () => {
    const pkg = await createPackage('action_capable');
    const queued = await request(url)
      .post(`/v1/providers/packages/${pkg.id}/versions/${pkg.versionId}/validate?full=true`)
      .set(auth)
      .expect(202);
    expect(queued.body).toMatchObject({ id: expect.stringMatching(/^conf_/), status: 'queued', full: true });
    expect(queued.headers.location).toBe(`/v1/providers/conformance/${queued.body.id}`);
    const report = await waitFor(
      async () => {
        const res = await request(url).get(`/v1/providers/conformance/${queued.body.id}`).set(auth).expect(200);
        return res.body.status === 'completed' ? res.body : undefined;
      },
      { what: 'the full conformance run', timeoutMs: 25_000, intervalMs: 100 },
    );
    expect(report.score).toBeGreaterThanOrEqual(80);
    expect(report.passed).toBe(true);
    expect(runtime.requests.length).toBeGreaterThan(0);
  });

  it("lists a version's conformance runs newest first, only to their developer", async () => {
    const pkg = await createPackage('data_only', readOnlyCapabilities());
    const first = await request(url).post(`/v1/providers/packages/${pkg.id}/versions/${pkg.versionId}/validate`).set(auth).expect(200);
    const second = await request(url).post(`/v1/providers/packages/${pkg.id}/versions/${pkg.versionId}/validate`).set(auth).expect(200);
    const list = await request(url).get('/v1/providers/conformance').query({ version_id: pkg.versionId }).set(auth).expect(200);
    expect(list.body.data.map((run: { id: string }) => run.id)).toEqual([second.body.id, first.body.id]);
    expect(list.body.data[0]).toMatchObject({ versionId: pkg.versionId, full: false, status: 'completed', dimensions: expect.any(Object) });
    const limited = await request(url)
      .get('/v1/providers/conformance')
      .query({ version_id: pkg.versionId, limit: 1 })
      .set(auth)
      .expect(200);
    expect(limited.body.data).toHaveLength(1);

    const stranger = await onboardDeveloper(url, smtp, `stranger-${Date.now()}@example.com`);
    const theirs = await request(url).get('/v1/providers/conformance').query({ version_id: pkg.versionId }).set(stranger.auth).expect(200);
    expect(theirs.body.data).toEqual([]);
    const bad = await request(url).get('/v1/providers/conformance').query({ version_id: 'nope' }).set(auth).expect(400);
    expect(bad.body).toMatchObject({ status: 400, field: 'version_id' });
  });

  it('lists a data_only version automatically on submit, publishes it and shows it in the marketplace', async () => {
    const pkg = await createPackage('data_only', readOnlyCapabilities());
    const submitted = await submit(pkg).expect(200);
    expect(submitted.body).toMatchObject({ review: 'automatic', version: { state: 'approved' }, conformance: { passed: true } });
    expect(await eventsOf('package.submitted', pkg.id)).toEqual([
      {
        payload: {
          app_id: appId,
          data: {
            package_id: pkg.id,
            version_id: pkg.versionId,
            version: '1.0.0',
            name: expect.any(String),
            risk_tier: 'data_only',
            submitted_by: 'lifecycle@example.com',
          },
        },
      },
    ]);

    const published = await publish(pkg).expect(200);
    expect(published.body).toMatchObject({
      publishedVersionId: pkg.versionId,
      version: { state: 'published' },
      catalogUrl: expect.stringContaining(`/v1/marketplace/packages/${pkg.slug}`),
    });
    const [event] = await eventsOf('package.published', pkg.id);
    expect(event.payload.data).toMatchObject({
      package_id: pkg.id,
      version_id: pkg.versionId,
      version: '1.0.0',
      catalog_url: published.body.catalogUrl,
    });

    const listing = await request(url).get(`/v1/marketplace/packages/${pkg.slug}`).set(user.auth).expect(200);
    expect(listing.body).toMatchObject({ id: pkg.id, version: '1.0.0', riskTier: 'data_only' });
    const search = await request(url)
      .get('/v1/marketplace/packages')
      .query({ q: 'Finance', tier: 'data_only', capability_type: 'history' })
      .set(user.auth)
      .expect(200);
    expect(search.body.packages.map((p: { id: string }) => p.id)).toContain(pkg.id);
    const none = await request(url)
      .get('/v1/marketplace/packages')
      .query({ capability_type: 'action', tier: 'data_only' })
      .set(user.auth)
      .expect(200);
    expect(none.body.packages.map((p: { id: string }) => p.id)).not.toContain(pkg.id);
  });

  it('sends higher tiers to manual review: reject returns the version to draft with the reason, approve allows publish', async () => {
    const pkg = await createPackage('action_capable');
    const submitted = await submit(pkg).expect(200);
    expect(submitted.body).toMatchObject({ review: 'manual', version: { state: 'in_review' } });

    const early = await publish(pkg).expect(409);
    expect(early.body).toMatchObject({ type: problemType('conflict'), current_state: 'in_review' });

    const queue = await request(url).get('/v1/operator/reviews').set(operator).expect(200);
    expect(queue.body.reviews.map((r: { id: string }) => r.id)).toContain(pkg.versionId);

    await request(url)
      .post(`/v1/operator/packages/${pkg.id}/versions/${pkg.versionId}/reject`)
      .set(operator)
      .send({ reason: 'Transfers need a daily cap' })
      .expect(200);
    const rejected = await request(url).get(`/v1/providers/packages/${pkg.id}`).set(auth).expect(200);
    expect(rejected.body.versions[0]).toMatchObject({ state: 'draft', reviewReason: 'Transfers need a daily cap' });

    await submit(pkg).expect(200);
    await request(url).post(`/v1/operator/packages/${pkg.id}/versions/${pkg.versionId}/approve`).set(operator).expect(200);
    await publish(pkg).expect(200);
    await request(url).post(`/v1/operator/packages/${pkg.id}/versions/${pkg.versionId}/approve`).set(operator).expect(409);
  });

  it('refuses submission with conformance_failed when the runtime answers with the wrong envelopes', async () => {
    const pkg = await createPackage('action_capable');
    await runtime.behave('wrong_envelope');
    const res = await submit(pkg).expect(400);
    expect(res.body).toMatchObject({ type: problemType('conformance_failed'), score: expect.any(Number) });
    expect(res.body.score).toBeLessThan(80);
  });

  it('passes local validation but refuses submission with dimension_below_threshold when the runtime leaks secrets', async () => {
    const pkg = await createPackage('action_capable');
    await runtime.behave('leaks_secrets');
    const local = await request(url).post(`/v1/providers/packages/${pkg.id}/versions/${pkg.versionId}/validate`).set(auth).expect(200);
    expect(local.body.passed).toBe(true);
    const res = await submit(pkg).expect(400);
    expect(res.body).toMatchObject({ type: problemType('dimension_below_threshold'), dimension: 'security' });
    expect(res.body.score).toBeGreaterThanOrEqual(80);
    const unchanged = await request(url).get(`/v1/providers/packages/${pkg.id}`).set(auth).expect(200);
    expect(unchanged.body.versions[0].state).toBe('draft');
  });

  it('installs and uninstalls with install.created and install.removed; installing twice answers the same install', async () => {
    const pkg = await createPackage('data_only', readOnlyCapabilities());
    await submit(pkg).expect(200);
    await publish(pkg).expect(200);

    const first = await request(url).post('/v1/installs').set(user.auth).send({ package_id: pkg.id }).expect(201);
    expect(first.body).toMatchObject({
      id: expect.stringMatching(/^inst_/),
      package_id: pkg.id,
      version: '1.0.0',
      scopes: ['capabilities:execute'],
      status: 'active',
    });
    const again = await request(url).post('/v1/installs').set(user.auth).send({ package_id: pkg.id }).expect(200);
    expect(again.body.id).toBe(first.body.id);
    const [created] = await dataSource.query(
      `SELECT payload FROM events WHERE type = 'install.created' AND payload->'data'->>'install_id' = $1`,
      [first.body.id],
    );
    expect(created.payload).toEqual({
      app_id: appId,
      data: { install_id: first.body.id, user_id: user.id, package_id: pkg.id, version: '1.0.0', scopes_granted: ['capabilities:execute'] },
    });
    const [{ sealed }] = await dataSource.query(`SELECT refresh_token_encrypted AS sealed FROM installs WHERE id = $1`, [first.body.id]);
    expect(sealed).toMatch(/^v1\./);

    const listed = await request(url).get('/v1/installs').set(user.auth).expect(200);
    expect(listed.body.installs.map((i: { id: string }) => i.id)).toEqual([first.body.id]);
    const other = await login(url, idp, { sub: 'uid-stranger' });
    await request(url).delete(`/v1/installs/${first.body.id}`).set(other.auth).expect(404);

    const removed = await request(url).delete(`/v1/installs/${first.body.id}`).set(user.auth).expect(200);
    expect(removed.body).toMatchObject({ status: 'removed', removed_reason: 'user_uninstalled' });
    const [gone] = await dataSource.query(
      `SELECT payload FROM events WHERE type = 'install.removed' AND payload->'data'->>'install_id' = $1`,
      [first.body.id],
    );
    expect(gone.payload.data).toEqual({ install_id: first.body.id, user_id: user.id, package_id: pkg.id, reason: 'user_uninstalled' });
    const [{ revoked }] = await dataSource.query(
      `SELECT bool_and(revoked_at IS NOT NULL) AS revoked FROM oauth_refresh_tokens WHERE install_id = $1`,
      [first.body.id],
    );
    expect(revoked).toBe(true);
    await request(url).post('/v1/installs').set(user.auth).send({ package_id: 'pkg_unknown0000000000000000' }).expect(404);
  });

  it('hides a suspended package from the marketplace and refuses its installs and publication until reinstated', async () => {
    const pkg = await createPackage('data_only', readOnlyCapabilities());
    await submit(pkg).expect(200);
    await publish(pkg).expect(200);
    const suspended = await request(url)
      .post(`/v1/operator/packages/${pkg.id}/suspend`)
      .set(operator)
      .send({ reason: 'policy_violation', message: 'Shows ads in the daily brief', remediation: 'Remove the ads and contact support' })
      .expect(200);
    expect(suspended.body).toMatchObject({ status: 'suspended', suspension: { reason: 'policy_violation' } });
    const [event] = await eventsOf('package.suspended', pkg.id);
    expect(event.payload.data).toEqual({
      package_id: pkg.id,
      reason: 'policy_violation',
      message: 'Shows ads in the daily brief',
      remediation: 'Remove the ads and contact support',
      suspended_at: expect.any(String),
    });

    await request(url).get(`/v1/marketplace/packages/${pkg.slug}`).set(user.auth).expect(404);
    const list = await request(url).get('/v1/marketplace/packages').set(user.auth).expect(200);
    expect(list.body.packages.map((p: { id: string }) => p.id)).not.toContain(pkg.id);
    await request(url).post('/v1/installs').set(user.auth).send({ package_id: pkg.id }).expect(404);
    const refused = await submit(pkg).expect(403);
    expect(refused.body.type).toBe(problemType('account_suspended'));

    await request(url).post(`/v1/operator/packages/${pkg.id}/reinstate`).set(operator).expect(200);
    await request(url).get(`/v1/marketplace/packages/${pkg.slug}`).set(user.auth).expect(200);
  });

  it('lets an app start an install from its own site with the authorization-code flow and PKCE', async () => {
    const pkg = await createPackage('data_only', readOnlyCapabilities());
    await submit(pkg).expect(200);
    await publish(pkg).expect(200);
    const verifier = generators.codeVerifier();
    const request_ = {
      response_type: 'code',
      client_id: app.client_id,
      redirect_uri: 'https://acme.example/callback',
      package_id: pkg.id,
      scope: 'capabilities:execute',
      state: 'xyz',
      code_challenge: generators.codeChallenge(verifier),
      code_challenge_method: 'S256',
    };
    const consentScreen = await request(url).get('/v1/oauth/authorize').query(request_).set(user.auth).expect(200);
    expect(consentScreen.body).toMatchObject({ package: { id: pkg.id }, scopes: ['capabilities:execute'] });
    await request(url)
      .post('/v1/oauth/authorize')
      .set(user.auth)
      .send({ ...request_, redirect_uri: 'https://evil.example/callback' })
      .expect(400);

    const consent = await request(url).post('/v1/oauth/authorize').set(user.auth).send(request_).expect(200);
    const redirect = new URL(consent.body.redirect_to);
    expect(`${redirect.origin}${redirect.pathname}`).toBe('https://acme.example/callback');
    expect(redirect.searchParams.get('state')).toBe('xyz');
    const code = redirect.searchParams.get('code')!;

    const issuer = new Issuer({ issuer: url, token_endpoint: `${url}/v1/auth/token` });
    const client = new issuer.Client({
      client_id: app.client_id,
      client_secret: app.client_secret,
      token_endpoint_auth_method: 'client_secret_basic',
    });
    const wrongVerifier = await client
      .grant({ grant_type: 'authorization_code', code, redirect_uri: request_.redirect_uri, code_verifier: generators.codeVerifier() })
      .catch((e: unknown) => e);
    expect((wrongVerifier as InstanceType<typeof oidcErrors.OPError>).error).toBe('invalid_grant');
    const tokens = await client.grant({
      grant_type: 'authorization_code',
      code,
      redirect_uri: request_.redirect_uri,
      code_verifier: verifier,
    });
    expect(tokens.refresh_token).toBeDefined();
    const claims = JSON.parse(Buffer.from(tokens.access_token!.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ sub: appId, uid: user.id, iid: consent.body.install_id, scope: 'capabilities:execute' });
    const reused = await client
      .grant({ grant_type: 'authorization_code', code, redirect_uri: request_.redirect_uri, code_verifier: verifier })
      .catch((e: unknown) => e);
    expect((reused as InstanceType<typeof oidcErrors.OPError>).error).toBe('invalid_grant');
    const installs = await request(url).get('/v1/installs').set(user.auth).expect(200);
    expect(installs.body.installs.map((i: { id: string }) => i.id)).toContain(consent.body.install_id);
  });

  it('suspends a published package after the configured period without activity', async () => {
    const pkg = await createPackage('data_only', readOnlyCapabilities());
    await submit(pkg).expect(200);
    await publish(pkg).expect(200);
    await factories(dataSource).idlePackage(pkg.id, '181 days');
    const counts = await retention.purgeExpired();
    expect(counts.packagesSuspendedForInactivity).toBeGreaterThanOrEqual(1);
    const [event] = await eventsOf('package.suspended', pkg.id);
    expect(event.payload.data).toMatchObject({ reason: 'inactivity' });
    await request(url).get(`/v1/marketplace/packages/${pkg.slug}`).set(user.auth).expect(404);
  });

  it('keeps the operator API behind OPERATOR_TOKEN', async () => {
    await request(url).get('/v1/operator/reviews').expect(401);
  });
});
