import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { normaliseCapabilities, RULES_VERSION, staticVerdict } from '@soul-service/rules';
import { TestEnvironment } from '../support/harness';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';

type Json = Record<string, unknown>;

/** docs/examples/<mode>/package.json: the packages the docs give providers to start from. */
function examplePackages(): Array<{ name: string; body: Json & { riskTier: string; capabilities: unknown[] } }> {
  const root = join(__dirname, '..', '..', 'docs', 'examples');
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      try {
        return [{ name: `docs/examples/${entry.name}`, body: JSON.parse(readFileSync(join(root, entry.name, 'package.json'), 'utf8')) }];
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      }
    });
}

/** Variants of the e2e tests' good package that lose points in different checks (the verdicts must agree on those too). */
function fixtureDrafts(): Array<{ name: string; capabilities: Json[] }> {
  const good = () => goodPackageCapabilities() as Json[];
  const balance = (change: (c: Json) => Json) => good().map((c) => (c.name === 'balance' ? change(c) : c));
  return [
    { name: 'the good package', capabilities: good() },
    { name: 'no examples, a short description', capabilities: balance((c) => ({ ...c, description: 'Balance', examples: undefined })) },
    {
      name: 'a component its example does not fit',
      capabilities: balance((c) => ({ ...c, surfaceGuidance: { ...(c.surfaceGuidance as Json), preferredComponents: ['ranked_list'] } })),
    },
    {
      name: 'undescribed properties, no responseSchema',
      capabilities: balance((c) => ({
        ...c,
        schema: { type: 'object', properties: { account: { type: 'string' } } },
        responseSchema: undefined,
      })),
    },
    { name: 'the short form', capabilities: [{ type: 'state', name: 'short', schema: { account: { type: 'string', required: true } } }] },
  ];
}

/** The package's own verdict for the descriptors and tier the service validated. */
function localVerdict(riskTier: string, capabilities: unknown[]) {
  return staticVerdict({ riskTier, capabilities: normaliseCapabilities(capabilities) });
}

/**
 * The service's quick validation and @soul-service/rules' `staticVerdict` (what the CLI's `validate`
 * runs offline) give the same verdict: the same scores, the same checks with the same outcomes and
 * details, and the same rules version, for every example package of the docs and for the e2e tests'
 * descriptor fixtures (issue 25, "A verdict of validate and of the server's validate … is identical").
 */
describe('rules parity: the server validates as @soul-service/rules does', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let runtime: ProviderRuntime;
  let url: string;
  let auth: { authorization: string };
  let appId: string;
  let slugs = 0;

  async function createPackage(body: Json): Promise<{ id: string; versionId: string }> {
    slugs += 1;
    const res = await request(url)
      .post('/v1/providers/packages')
      .set(auth)
      .send({ ...body, appId, slug: `parity-${slugs}`, runtimeUrl: runtime.url })
      .expect(201);
    return { id: res.body.id as string, versionId: res.body.versions[0].id as string };
  }

  async function validate(pkg: { id: string; versionId: string }, draft?: unknown[]): Promise<Json> {
    const res = await request(url)
      .post(`/v1/providers/packages/${pkg.id}/versions/${pkg.versionId}/validate`)
      .set(auth)
      .send(draft ? { capabilities: draft } : {})
      .expect(200);
    return res.body as Json;
  }

  beforeAll(async () => {
    assertTestCaTrusted();
    smtp = await SmtpSink.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url });
    ({ url } = await env.startApi());
    // The worker sends the verification mail of the onboarding.
    await env.startWorker();
    const developer = await onboardDeveloper(url, smtp, 'parity@example.com');
    const app = await registerApp(url, developer, { webhook_url: undefined });
    appId = app.id;
    auth = { authorization: `Bearer ${await appToken(url, app)}` };
  });
  afterAll(async () => {
    await env?.close();
    await runtime?.close();
    await smtp?.close();
  });

  const examples = examplePackages();

  it('finds the example packages of the docs', () => {
    expect(examples.length).toBeGreaterThanOrEqual(5);
  });

  it.each(examples.map((e) => [e.name, e.body] as const))('gives %s the same verdict', async (_, body) => {
    const pkg = await createPackage(body);
    const { id, ...served } = await validate(pkg);
    expect(served).toEqual(localVerdict(body.riskTier, body.capabilities));
    expect(served.rulesVersion).toBe(RULES_VERSION);

    // The stored run shows the same verdict and rules version.
    const run = await request(url)
      .get(`/v1/providers/conformance/${String(id)}`)
      .set(auth)
      .expect(200);
    expect(run.body).toMatchObject({
      score: served.score,
      passed: served.passed,
      dimensions: served.dimensions,
      rulesVersion: RULES_VERSION,
    });
  });

  it.each(fixtureDrafts().map((d) => [d.name, d.capabilities] as const))(
    'gives the draft with %s the same verdict',
    async (_, capabilities) => {
      const pkg = await createPackage({
        name: 'Parity',
        description: 'Parity fixtures',
        riskTier: 'action_capable',
        capabilities: goodPackageCapabilities(),
      });
      const { id: _id, ...served } = await validate(pkg, capabilities);
      expect(served).toEqual(localVerdict('action_capable', capabilities));
    },
  );

  it('loses points for the same reasons: the fixtures do not all pass, so the comparison is not between two perfect scores', () => {
    const scores = fixtureDrafts().map((d) => localVerdict('action_capable', d.capabilities).score);
    expect(new Set(scores).size).toBeGreaterThan(2);
  });
});
