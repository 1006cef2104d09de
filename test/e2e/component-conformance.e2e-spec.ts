import request from 'supertest';
import { DIMENSIONS } from '@soul-service/rules';
import { TestEnvironment } from '../support/harness';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { waitFor } from '../support/wait-for';

type CheckReport = { id: string; passed: boolean; points: number; max: number; detail: string; warning?: boolean };
type Dimension = { score: number; max: number; ran: boolean; checks: CheckReport[] };
type Report = { id: string; score: number; passed: boolean; full: boolean; dimensions: Record<string, Dimension> };

const checkOf = (report: Report, id: string): CheckReport => {
  const found = DIMENSIONS.flatMap((k) => report.dimensions[k].checks).find((c) => c.id === id);
  if (!found) throw new Error(`no check ${id} in ${JSON.stringify(report)}`);
  return found;
};

/**
 * The component contracts (docs/components.md) checked against a package's
 * examples through the public API: a quick validation (POST …/validate, local)
 * and a full run (validate?full=true, queued, against a real HTTPS runtime on
 * loopback) report the same component checks, with the capability and the
 * component named (docs/conformance.md).
 */
describe('conformance checks the preferred components against the examples (through the HTTP API)', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let runtime: ProviderRuntime;
  let url: string;
  let auth: { authorization: string };
  let appId: string;
  let slugs = 0;

  /** The good package on this file's runtime, with `balance` changed as a test needs. */
  const capabilities = (balance: (c: Record<string, unknown>) => Record<string, unknown> = (c) => c) =>
    (goodPackageCapabilities() as Array<Record<string, unknown>>).map((c) => {
      const placed = { ...c, runtimeUrl: runtime.url };
      return c.name === 'balance' ? balance(placed) : placed;
    });
  const preferring = (components: string[]) => (c: Record<string, unknown>) => ({
    ...c,
    surfaceGuidance: { ...(c.surfaceGuidance as object), preferredComponents: components },
  });

  async function createPackage(caps: unknown[]) {
    slugs += 1;
    const res = await request(url)
      .post('/v1/providers/packages')
      .set(auth)
      .send({ appId, name: `Widgets ${slugs}`, slug: `widgets-${slugs}`, description: 'x', riskTier: 'action_capable', capabilities: caps })
      .expect(201);
    return { id: res.body.id as string, versionId: res.body.versions[0].id as string };
  }

  async function quick(pkg: { id: string; versionId: string }, body?: unknown): Promise<Report> {
    const res = await request(url)
      .post(`/v1/providers/packages/${pkg.id}/versions/${pkg.versionId}/validate`)
      .set(auth)
      .send(body ?? {})
      .expect(200);
    return res.body as Report;
  }

  async function fullRun(pkg: { id: string; versionId: string }): Promise<Report> {
    const queued = await request(url)
      .post(`/v1/providers/packages/${pkg.id}/versions/${pkg.versionId}/validate?full=true`)
      .set(auth)
      .expect(202);
    return waitFor(
      async () => {
        const res = await request(url).get(`/v1/providers/conformance/${queued.body.id}`).set(auth).expect(200);
        return res.body.status === 'completed' ? (res.body as Report) : undefined;
      },
      { what: 'the full conformance run', timeoutMs: 30_000, intervalMs: 100 },
    );
  }

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url });
    ({ url } = await env.startApi());
    await env.startWorker();
    const developer = await onboardDeveloper(url, smtp, 'widgets@example.com');
    // No webhook endpoint: its receiver probe is not what these tests are about.
    const app = await registerApp(url, developer, { webhook_url: undefined });
    appId = app.id;
    auth = { authorization: `Bearer ${await appToken(url, app)}` };
  });
  afterAll(async () => {
    await env?.close();
    await runtime?.close();
    await smtp?.close();
  });

  it('blocks, in a quick and a full run alike, a capability whose example fits none of its preferred components', async () => {
    // The balance ({available, currency}) asks for a ranked list: its widget would show nothing the provider meant.
    const pkg = await createPackage(capabilities(preferring(['ranked_list'])));
    for (const report of [await quick(pkg), await fullRun(pkg)]) {
      const render = checkOf(report, 'documentation.components_render');
      // Partial credit per capability (the ticker and meeting_updates fit theirs), but the dimension is capped.
      expect(render).toMatchObject({ passed: false, points: 1, max: 2 });
      expect(render.detail).toContain('balance: none of its preferred components (ranked_list) fits its example response');
      expect(render.detail).toContain('ranked_list reads a non-empty list: the data itself when an array, else an array under items');
      // Blocking: the documentation dimension is held below the floor of 5, so the version cannot be submitted.
      expect(report.dimensions.documentation.score).toBeLessThan(5);
      expect(report.passed).toBe(false);
    }
  }, 60_000);

  it('passes the components of a package whose examples fit them, in a quick and a full run alike', async () => {
    const pkg = await createPackage(capabilities());
    const [local, full] = [await quick(pkg), await fullRun(pkg)];
    for (const report of [local, full]) {
      expect(checkOf(report, 'documentation.components_render')).toMatchObject({
        passed: true,
        max: 2,
        points: 2,
        detail: 'every capability has a preferred component its example data fits',
      });
      expect(checkOf(report, 'documentation.components_fit')).toMatchObject({ passed: true, warning: true });
      expect(report.dimensions.documentation.score).toBe(report.dimensions.documentation.max);
    }
    expect(full).toMatchObject({ full: true, passed: true });
  }, 60_000);

  it('warns, without costing points, about a preferred component the example does not fit while another one does', async () => {
    const pkg = await createPackage(capabilities(preferring(['stat_row', 'sparkline'])));
    const report = await quick(pkg);
    const fit = checkOf(report, 'documentation.components_fit');
    expect(fit).toMatchObject({ passed: false, points: 0, max: 0, warning: true });
    expect(fit.detail).toContain(
      'balance prefers sparkline, but its example response does not fit it, so the widget leaves it out (it shows stat_row)',
    );
    expect(fit.detail).toContain('sparkline reads a numeric series of 2 or more points');
    expect(checkOf(report, 'documentation.components_render').passed).toBe(true);
    expect(report.dimensions.documentation.score).toBe(report.dimensions.documentation.max);
    expect(report.passed).toBe(true);
  });

  it('warns that a state widget whose schema requires a param without a default shows no data, and says how to fix it', async () => {
    // The good package's balance requires `account` and gives it no default.
    const pkg = await createPackage(capabilities());
    const report = await quick(pkg);
    expect(checkOf(report, 'documentation.widget_params')).toEqual({
      id: 'documentation.widget_params',
      passed: false,
      points: 0,
      max: 0,
      warning: true,
      detail:
        'balance: its schema requires "account" without a default, so its widget has no params to be polled with and shows no data ' +
        '(the app says the provider has not said what it shows by default); give "account" a default (what the widget should show)',
    });
    expect(report.passed).toBe(true);

    // The same descriptors with a default, validated as a draft: the warning is gone.
    const withDefault = capabilities((c) => {
      const schema = c.schema as { properties: { account: Record<string, unknown> } };
      return { ...c, schema: { ...schema, properties: { account: { ...schema.properties.account, default: 'checking' } } } };
    });
    const fixed = await quick(pkg, { capabilities: withDefault });
    expect(checkOf(fixed, 'documentation.widget_params')).toMatchObject({
      passed: true,
      warning: true,
      detail: 'every state widget can be polled with its schema defaults',
    });
  });

  it('warns about surfaceGuidance.fields naming a field the data does not have', async () => {
    const pkg = await createPackage(capabilities());
    const typo = capabilities((c) => ({
      ...c,
      surfaceGuidance: { ...(c.surfaceGuidance as object), fields: { availble: { label: 'Available', format: 'number' } } },
    }));
    const report = await quick(pkg, { capabilities: typo });
    const fields = checkOf(report, 'documentation.surface_fields');
    expect(fields).toMatchObject({ passed: false, warning: true });
    expect(fields.detail).toContain('balance: surfaceGuidance.fields names "availble", which is neither a property of its responseSchema');
    expect(fields.detail).toContain('(available, currency)');
  });
});
