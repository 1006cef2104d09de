import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import { RULES_VERSION } from '@soul-service/rules';
import { WebhookReceiver as SdkWebhookReceiver } from '@soul-service/runtime-sdk';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { onboardDeveloper, OnboardedDeveloper, registerApp, RegisteredApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { assertTestCaTrusted } from '../support/test-ca';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';
import { WebhookReceiver } from '../support/webhook-receiver';
import { bundleSoulCli, type Finished, startSoul } from '../support/soul-cli';

/** The CLI as one file, bundled from its sources, so the test does not depend on a build. */
const BUNDLE = join(__dirname, '..', '..', 'tmp', 'soul-cli-e2e.js');

/**
 * The `soul` CLI driven as a subprocess (stdin not a terminal, so never prompting and answering JSON) against a
 * real service, PostgreSQL, Redis, worker, HTTPS provider runtime and webhook receiver.
 */
describe('soul CLI against the real service', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let receiver: WebhookReceiver;
  let url: string;
  let developer: OnboardedDeveloper;
  let app: RegisteredApp;
  let user: LoggedInUser;
  let configDir: string;
  let workDir: string;
  let packageId: string;

  /** Starts `soul …` with the service's address and a config folder of the test's own. */
  function start(args: string[], extraEnv: Record<string, string> = {}) {
    return startSoul(BUNDLE, args, { cwd: workDir, env: { SOUL_BASE_URL: url, SOUL_CONFIG_DIR: configDir, ...extraEnv } });
  }
  const soul = (args: string[], extraEnv: Record<string, string> = {}) => start(args, extraEnv).done;
  const json = (finished: Finished) => {
    if (finished.code !== 0) throw new Error(`soul exited ${finished.code}: ${finished.stderr}`);
    return JSON.parse(finished.stdout);
  };
  const descriptor = (version: string) => ({
    appId: 'app_your_app_id',
    name: 'Acme CLI Bank',
    slug: 'acme-cli-bank',
    description: 'Balances and transfers, pushed from the CLI',
    riskTier: 'action_capable',
    version,
    runtimeUrl: runtime.url,
    capabilities: goodPackageCapabilities(),
  });

  beforeAll(async () => {
    assertTestCaTrusted();
    bundleSoulCli('soul-cli-e2e');
    configDir = mkdtempSync(join(tmpdir(), 'soul-e2e-config-'));
    workDir = mkdtempSync(join(tmpdir(), 'soul-e2e-work-'));
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    receiver = await WebhookReceiver.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env, WEBHOOK_RETRY_BASE_MS: '1' });
    url = (await env.startApi()).url;
    await env.startWorker();
    developer = await onboardDeveloper(url, smtp, 'cli@example.com');
    app = await registerApp(url, developer, { webhook_url: `${receiver.url}/cli` });
    user = await login(url, idp, { sub: 'uid-cli-user', name: 'CLI User', email: 'cli-user@example.com' });
  }, 60_000);
  afterAll(async () => {
    await env?.close();
    await receiver?.close();
    await runtime?.close();
    await idp?.close();
    await smtp?.close();
  });

  it('refuses to run without a credential, naming the variable to set (exit 2)', async () => {
    const finished = await soul(['whoami']);
    expect(finished.code).toBe(2);
    expect(JSON.parse(finished.stderr).error).toMatchObject({ code: 'usage', hint: expect.stringContaining('SOUL_TOKEN') });
  });

  it('logs in with a token, saves it readable by the user only, and answers whoami with it', async () => {
    const logged = json(await soul(['login', '--token', developer.token]));
    expect(logged).toMatchObject({ logged_in: true, kind: 'developer', id: developer.id, email: 'cli@example.com', base_url: url });
    const file = join(configDir, 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8')).logins[url].token).toBe(developer.token);
    expect(json(await soul(['whoami']))).toMatchObject({ kind: 'developer', token_source: 'saved login', email: 'cli@example.com' });
  });

  it('creates a package, pushes a version, submits it, publishes it after the review, and reports it in status', async () => {
    const file = join(workDir, 'soul-package.json');
    writeFileSync(file, JSON.stringify(descriptor('1.0.0')));
    // The developer has one app: the placeholder app id in the file is replaced by it.
    const created = json(await soul(['packages', 'create']));
    expect(created).toMatchObject({ appId: app.id, slug: 'acme-cli-bank', versions: [{ version: '1.0.0', state: 'draft' }] });
    packageId = created.id as string;

    writeFileSync(file, JSON.stringify(descriptor('1.1.0')));
    const pushed = json(await soul(['push', '--package', packageId]));
    expect(pushed).toMatchObject({ id: expect.stringMatching(/^ver_/), version: '1.1.0', state: 'draft' });

    const submitted = json(await soul(['submit', '--package', packageId]));
    expect(submitted).toMatchObject({ version: { id: pushed.id }, conformance: { passed: true } });
    if (submitted.review === 'manual') {
      await request(url)
        .post(`/v1/operator/packages/${packageId}/versions/${pushed.id}/approve`)
        .set({ authorization: `Bearer ${OPERATOR_TOKEN}` })
        .expect(200);
    }
    const published = json(await soul(['publish', '--package', packageId]));
    expect(published).toMatchObject({ id: packageId, publishedVersionId: pushed.id, version: { version: '1.1.0', state: 'published' } });

    const status = json(await soul(['status', '--package', packageId, '--json']));
    expect(status.package).toMatchObject({ id: packageId, publishedVersionId: pushed.id, status: 'active' });
    expect(status.package.versions).toBeUndefined();
    expect(status.versions.map((v: { version: string; state: string }) => [v.version, v.state])).toEqual([
      ['1.1.0', 'published'],
      ['1.0.0', 'draft'],
    ]);
    expect(status.conformance).toMatchObject({ versionId: pushed.id, status: 'completed', passed: true });
  });

  it("reports the service's refusal with its field errors and request id (exit 1)", async () => {
    writeFileSync(
      join(workDir, 'bad.json'),
      JSON.stringify({ version: '9.0.0', capabilities: [{ type: 'state', nmae: 'typo', schema: { type: 'object' } }] }),
    );
    const finished = await soul(['push', 'bad.json', '--package', packageId]);
    expect(finished.code).toBe(1);
    expect(finished.stdout).toBe('');
    const { error } = JSON.parse(finished.stderr);
    expect(error).toMatchObject({ status: 400, request_id: expect.stringMatching(/^req_/) });
    expect(error.field_errors.length).toBeGreaterThan(0);
    expect(JSON.stringify(error.field_errors)).toContain('nmae');
  });

  it('validate gives the verdict of the service offline, and with --package shows the service agrees (same rules version)', async () => {
    const file = join(workDir, 'soul-package.json');
    writeFileSync(file, JSON.stringify(descriptor('1.2.0')));
    const offline = json(await soul(['validate']));
    expect(offline.local).toMatchObject({ passed: true, rulesVersion: RULES_VERSION });
    expect(offline.server).toBeUndefined();

    const compared = json(await soul(['validate', '--package', packageId]));
    expect(compared.server).toMatchObject({ same: true, sameRules: true, verdict: { rulesVersion: RULES_VERSION } });
    const { score, passed, dimensions } = compared.server.verdict;
    expect({ score, passed, dimensions }).toEqual({
      score: offline.local.score,
      passed: offline.local.passed,
      dimensions: offline.local.dimensions,
    });
  });

  it('validate refuses a bad descriptor with the same field errors as the service', async () => {
    const bad = { version: '9.0.0', capabilities: [{ type: 'state', nmae: 'typo', schema: { type: 'object' } }] };
    writeFileSync(join(workDir, 'bad.json'), JSON.stringify(bad));
    const local = await soul(['validate', 'bad.json', '--risk-tier', 'action_capable']);
    const served = await soul(['push', 'bad.json', '--package', packageId]);
    expect([local.code, served.code]).toEqual([1, 1]);
    const fields = (finished: Finished) =>
      (JSON.parse(finished.stderr).error.field_errors as Array<{ field: string; code?: string }>).map((f) => [f.field, f.code]);
    expect(fields(local)).toEqual(fields(served));
  });

  it('triggers a signed test event to the app endpoint, then replays the delivery', async () => {
    const delivery = json(await soul(['trigger', 'install.created', '--app', app.id]));
    expect(delivery).toMatchObject({ id: expect.stringMatching(/^dlv_/), event_type: 'install.created', test: true });
    const received = await waitFor(
      () => receiver.received.find((r) => r.path === '/hooks/cli' && r.headers['webhook-id'] === delivery.event_id),
      {
        what: 'the test event at the receiver',
      },
    );
    expect(received.headers['x-service-signature']).toMatch(/^sha256=/);
    await waitFor(
      async () =>
        (await request(url).get(`/v1/providers/apps/${app.id}/webhook/deliveries/${delivery.id}`).set(developer.auth)).body.status ===
        'delivered',
      { what: 'the delivery to be delivered' },
    );

    const replay = json(await soul(['deliveries', 'replay', delivery.id, '--app', app.id]));
    expect(replay).toMatchObject({ replay_of: delivery.id, event_id: delivery.event_id });
    await waitFor(() => receiver.received.filter((r) => r.headers['webhook-id'] === delivery.event_id).length === 2, {
      what: 'the replay at the receiver',
    });
  });

  it('follows the execution log: calls made while it runs show up once each, and Ctrl-C ends it with 0', async () => {
    const install = await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201);
    const execute = async () =>
      (
        await request(url)
          .post(`/v1/providers/packages/${packageId}/capabilities/balance/execute`)
          .set(user.auth)
          .send({ params: { account: 'savings' } })
          .expect(200)
      ).body.requestId as string;
    const before = await execute();
    // A call's trace is written after its answer: the tail starts once this one is in the log, so it is "before".
    await waitFor(async () => (await request(url).get(`/v1/providers/executions/${before}`).set(developer.auth)).status === 200, {
      what: 'the first call in the log',
    });

    const tail = start(['logs', 'tail', '--package', packageId, '--capability', 'balance', '--interval', '0.3']);
    const made: string[] = [];
    const lines = () =>
      tail
        .stdout()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { request_id: string; install_id: string; capability: string });
    // The tail starts at the newest call it finds; calls made once it is polling are shown. Until one shows, make another.
    await waitFor(
      async () => {
        if (lines().length > 0) return true;
        made.push(await execute());
        return false;
      },
      { what: 'a call to show up in logs tail', timeoutMs: 20_000, intervalMs: 700 },
    );
    made.push(await execute());
    await waitFor(() => lines().some((l) => l.request_id === made[made.length - 1]), { what: 'the last call in logs tail' });
    tail.child.kill('SIGINT');
    const finished = await tail.done;
    expect(finished.code).toBe(0);

    const shown = lines().map((l) => l.request_id);
    expect(shown).not.toContain(before);
    expect(new Set(shown).size).toBe(shown.length);
    // Every call shown is one made meanwhile, in the order made, ending with the last one.
    expect(made.filter((id) => shown.includes(id))).toEqual(shown);
    expect(lines()[0]).toMatchObject({ install_id: install.body.id, capability: 'balance' });
  });
  it('listen forwards real events to a local receiver that the SDK verifies, and a restarted listen resumes without losing or repeating one', async () => {
    const secret = (await soul(['listen', '--print-secret'])).stdout.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const received: Array<{ id: string; type: string; data: Record<string, unknown> }> = [];
    const refused: number[] = [];
    const sdkReceiver = new SdkWebhookReceiver({ secret, handler: (event) => void received.push(event as never) });
    const server = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        void sdkReceiver.receive(req.headers, Buffer.concat(chunks)).then(({ status, body }) => {
          if (status !== 200) refused.push(status);
          res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        });
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const forwardTo = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
    const listenUntilReady = async () => {
      const listener = start(['listen', '--forward-to', forwardTo, '--interval', '0.3']);
      await waitFor(() => listener.stdout().includes('"ready"'), { what: 'soul listen to be ready' });
      return listener;
    };
    try {
      const installs = await request(url).get('/v1/installs').set(user.auth).expect(200);
      const installId = (installs.body.installs as Array<{ id: string; package_id: string }>).find((i) => i.package_id === packageId)!.id;

      let listener = await listenUntilReady();
      expect(JSON.parse(listener.stdout().split('\n')[0])).toMatchObject({ ready: true, app_id: app.id, forward_to: forwardTo, secret });
      await request(url)
        .delete(`/v1/installs/${installId}`)
        .set(user.auth)
        .expect((res) => expect([200, 202, 204]).toContain(res.status));
      await waitFor(() => received.some((e) => e.type === 'install.removed'), { what: 'install.removed forwarded', timeoutMs: 20_000 });
      listener.child.kill('SIGINT');
      expect((await listener.done).code).toBe(0);

      // While nobody listens, the user installs again: the restarted listener forwards it from where it stopped.
      const again = await request(url).post('/v1/installs').set(user.auth).send({ package_id: packageId }).expect(201);
      listener = await listenUntilReady();
      await waitFor(() => received.some((e) => e.type === 'install.created' && e.data.install_id === again.body.id), {
        what: 'the install made while listen was stopped, forwarded after the restart',
        timeoutMs: 20_000,
      });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      listener.child.kill('SIGINT');
      await listener.done;

      expect(refused).toEqual([]);
      const ids = received.map((e) => e.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(received.find((e) => e.type === 'install.removed')!.data).toMatchObject({ install_id: installId });
      // Exactly the envelopes the events API keeps: the receiver saw what a production delivery carries.
      const kept = await request(url).get(`/v1/providers/events/${ids[0]}`).set(developer.auth).expect(200);
      expect(received[0]).toEqual(kept.body);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
