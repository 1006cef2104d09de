import request from 'supertest';
import { TestEnvironment } from '../support/harness';
import { appToken, onboardDeveloper, registerApp } from '../support/providers';
import { PUBLIC_ADDRESS, ScriptedDns } from '../support/scripted-dns';
import { SmtpSink } from '../support/smtp-sink';
import { waitFor } from '../support/wait-for';

const dns = new ScriptedDns();
const ScriptedDnsModule = dns.module();
const problem = (code: string) => expect.stringMatching(new RegExp(`#${code}$`));

const capability = (runtimeUrl?: string) => ({
  type: 'state',
  name: 'balance',
  description: 'Current account balance for the dashboard widget',
  schema: { balance: { type: 'number', required: true } },
  ...(runtimeUrl === undefined ? {} : { runtimeUrl }),
});

/**
 * The runtime URL where the spec puts it, on the capability, under the
 * production rules (ALLOW_PRIVATE_TARGETS=false): the same address checks as
 * the package-level URL, reported under the capability's field.
 */
describe('capability runtimeUrl with ALLOW_PRIVATE_TARGETS=false', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let url: string;
  let appId: string;
  let auth: { authorization: string };
  let slugs = 0;

  const create = (capabilities: unknown[]) =>
    request(url)
      .post('/v1/providers/packages')
      .set(auth)
      .send({ appId, name: 'Strict', slug: `strict-${(slugs += 1)}`, description: 'x', riskTier: 'data_only', capabilities });

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ALLOW_PRIVATE_TARGETS: 'false' });
    ({ url } = await env.startApi({ imports: [ScriptedDnsModule] }));
    await env.startWorker({ env: { RUNTIME_TICK_MS: '3600000' }, imports: [ScriptedDnsModule] });
    const developer = await onboardDeveloper(url, smtp, 'strict-runtime@example.com');
    const app = await registerApp(url, developer, { webhook_url: undefined });
    appId = app.id;
    auth = { authorization: `Bearer ${await appToken(url, app)}` };
    dns.answer('runtime.acme.example', PUBLIC_ADDRESS);
    dns.answer('internal.acme.example', '10.0.0.7');
  }, 60_000);
  afterAll(async () => {
    await env?.close();
    await smtp?.close();
  });

  it.each([
    ['a loopback address', 'https://127.0.0.1:8443'],
    ['an IPv6 address embedding loopback', 'https://[::127.0.0.1]'],
    ['a private address', 'https://10.1.2.3'],
    ['a name that resolves to a private address', 'https://internal.acme.example'],
    ['a URL with credentials', 'https://user:pass@runtime.acme.example'],
    ['plain http', 'http://runtime.acme.example'],
  ])('refuses %s on a capability, naming the capability field', async (_what, runtimeUrl) => {
    const res = await create([capability(), { ...capability(runtimeUrl), name: 'savings' }]).expect(400);
    expect(res.body).toMatchObject({ type: problem('invalid_format'), field: 'capabilities[1].runtimeUrl' });
  });

  it('accepts a public runtime on the capability, and refuses a private one on a new version of the package', async () => {
    const created = await create([capability('https://runtime.acme.example/')]).expect(201);
    expect(created.body.versions[0]).toMatchObject({
      runtimeUrl: 'https://runtime.acme.example',
      capabilities: [{ runtimeUrl: 'https://runtime.acme.example' }],
    });
    const refused = await request(url)
      .post(`/v1/providers/packages/${created.body.id}/versions`)
      .set(auth)
      .send({ version: '1.1.0', capabilities: [capability('https://10.0.0.1')] })
      .expect(400);
    expect(refused.body).toMatchObject({ type: problem('invalid_format'), field: 'capabilities[0].runtimeUrl' });
  });

  it('runs conformance without calling a version that declares no runtime, and says why', async () => {
    const created = await create([capability()]).expect(201);
    const queued = await request(url)
      .post(`/v1/providers/packages/${created.body.id}/versions/${created.body.versions[0].id}/validate?full=true`)
      .set(auth)
      .expect(202);
    type Run = { status: string; dimensions: Record<string, { checks: Array<{ id: string; detail: string; passed: boolean }> }> };
    const run = await waitFor(
      async () => {
        const res = await request(url).get(`/v1/providers/conformance/${queued.body.id}`).set(auth).expect(200);
        return res.body.status === 'completed' ? (res.body as Run) : undefined;
      },
      { what: 'the full conformance run', timeoutMs: 20_000, intervalMs: 100 },
    );
    const execute = run.dimensions.contracts.checks.find((c) => c.id === 'contracts.execute');
    expect(execute).toMatchObject({
      passed: false,
      detail: expect.stringContaining('not called, the version declares no runtimeUrl'),
    });
  });
});
