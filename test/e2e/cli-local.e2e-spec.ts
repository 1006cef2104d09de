import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JSONWebKeySet } from 'jose';
import { CallContext, CapabilityDescriptor, defineRuntime } from '@soul-service/runtime-sdk';
import { RULES_VERSION } from '@soul-service/rules';
import { goodPackageCapabilities } from '../support/provider-runtime';
import { bundleSoulCli, jsonOf, startSoul } from '../support/soul-cli';
import { waitFor } from '../support/wait-for';

const ROOT = join(__dirname, '..', '..');

/** The state and action capabilities of the test banking package (they pass the service's conformance). */
const capabilities = () => goodPackageCapabilities().filter((c) => ['balance', 'transfer'].includes((c as { name: string }).name));

/**
 * `soul conformance --url`: the service's own runner (@soul-service/rules) run by the CLI, as a subprocess,
 * against a runtime built with the SDK on a loopback port that has no public address; the runtime trusts the
 * CLI's local key for test traffic only when it is given that key.
 */
describe('soul conformance against a local runtime', () => {
  let bundle: string;
  let configDir: string;
  let workDir: string;
  let jwksPath: string;
  const servers: Server[] = [];
  const contexts: CallContext[] = [];

  const soul = (args: string[], env: Record<string, string> = {}) =>
    startSoul(bundle, args, { cwd: workDir, env: { SOUL_CONFIG_DIR: configDir, ...env } }).done;

  /** An SDK runtime for `appId` on 127.0.0.1 over plain HTTP, trusting the local key set `localKeys` if given. */
  async function runtime(appId: string, localKeys?: JSONWebKeySet): Promise<string> {
    const served = defineRuntime({
      descriptor: { capabilities: capabilities() as CapabilityDescriptor[] },
      serviceUrl: 'https://service.example',
      appId,
      localKeys,
      handlers: {
        balance: async (params: Record<string, unknown>, context: CallContext) => {
          contexts.push(context);
          return { data: { available: params.account === 'savings' ? 9000 : 1520.75, currency: 'EUR' } };
        },
        transfer: async (_input: Record<string, unknown>, context: CallContext) => {
          contexts.push(context);
          return { result: { transferId: 'tr_fixture', state: 'completed' }, message: 'Test transfer: nothing sent.' };
        },
      },
    });
    const server = createServer(served.listener());
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  beforeAll(async () => {
    bundle = bundleSoulCli('soul-cli-local-e2e');
    configDir = mkdtempSync(join(tmpdir(), 'soul-local-config-'));
    workDir = mkdtempSync(join(tmpdir(), 'soul-local-work-'));
    writeFileSync(
      join(workDir, 'soul-package.json'),
      JSON.stringify({
        appId: 'app_your_app_id',
        name: 'Acme Local Bank',
        slug: 'acme-local-bank',
        description: 'Balances and transfers, checked on the developer’s machine',
        riskTier: 'action_capable',
        version: '1.0.0',
        capabilities: capabilities(),
      }),
    );
    const printed = await soul(['conformance', '--print-jwks-path']);
    expect(printed.code).toBe(0);
    jwksPath = printed.stdout.trim();
  }, 60_000);

  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('prints the path of the local key set, bare even in CI, and keeps the private key readable by the user only', async () => {
    expect(jwksPath).toBe(join(configDir, 'local-jwks.json'));
    const jwks = JSON.parse(readFileSync(jwksPath, 'utf8')) as JSONWebKeySet;
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', kid: expect.stringMatching(/^local-/) });
    expect(jwks.keys[0]).not.toHaveProperty('d');
    expect(statSync(join(configDir, 'local-key.json')).mode & 0o777).toBe(0o600);
    // The same key on the next run: a runtime started with it keeps trusting the CLI.
    expect((await soul(['conformance', '--print-jwks-path'], { CI: 'true' })).stdout.trim()).toBe(jwksPath);
  });

  it('runs all six dimensions with the service’s runner and passes a runtime that trusts the local key; the certificate is left to the service', async () => {
    const keys = JSON.parse(readFileSync(jwksPath, 'utf8')) as JSONWebKeySet;
    const url = await runtime('app_local', keys);
    contexts.length = 0;
    const report = jsonOf(await soul(['conformance', '--url', url, '--app', 'app_local']));
    expect(report).toMatchObject({ url, app_id: 'app_local', rules_version: RULES_VERSION, verdict: { passed: true, full: true } });
    expect(report.verdict.score).toBeGreaterThanOrEqual(95);
    for (const dimension of Object.values<{ ran: boolean }>(report.verdict.dimensions)) expect(dimension.ran).toBe(true);
    expect(report.not_judged_locally).toEqual([{ id: 'security.tls', why: expect.stringContaining('public CA') }]);
    // The four bad-token probes were refused; the rest was test traffic for a synthetic install, as from the service.
    const security = report.verdict.dimensions.security.checks as Array<{ id: string; passed: boolean }>;
    expect(security.find((check) => check.id === 'security.token_verification')).toMatchObject({ passed: true });
    expect(contexts.length).toBeGreaterThan(3);
    for (const context of contexts) expect(context).toMatchObject({ livemode: false, installId: expect.stringMatching(/^inst_test/) });
  });

  it('fails, saying how to start the runtime, when the runtime was not given the local key', async () => {
    const url = await runtime('app_local');
    const finished = await soul(['conformance', '--url', url]);
    expect(finished.code).toBe(1);
    const report = JSON.parse(finished.stdout);
    expect(report.verdict.passed).toBe(false);
    expect(report.hint).toContain(`SOUL_LOCAL_JWKS=${jwksPath}`);
    expect(JSON.parse(finished.stderr).error).toMatchObject({ code: 'conformance_failed' });
  });

  it('fails when the runtime answers as another app: the local tokens are for the app under test only', async () => {
    const keys = JSON.parse(readFileSync(jwksPath, 'utf8')) as JSONWebKeySet;
    const url = await runtime('app_someone_else', keys);
    const finished = await soul(['conformance', '--url', url, '--app', 'app_local']);
    expect(finished.code).toBe(1);
    expect(JSON.parse(finished.stdout).verdict.passed).toBe(false);
  });

  it('refuses a bad command line before calling anything (exit 2)', async () => {
    expect((await soul(['conformance'])).code).toBe(2);
    expect((await soul(['conformance', '--url', 'ftp://localhost'])).code).toBe(2);
    expect((await soul(['conformance', '--url', 'http://localhost:1', '--app', 'not-an-app'])).code).toBe(2);
    expect((await soul(['conformance', '--url', 'http://localhost:1', '--webhook-url', 'http://localhost:2/hook'])).code).toBe(2);
  });
});

/**
 * Every `soul init` template, made in a temporary folder as a provider would: its own tests pass, `validate`
 * passes offline, and its runtime, started with `npm start`'s command, passes the full local conformance run.
 * The folder is under the repository's tmp/, so the templates' `@soul-service/runtime-sdk` resolves to this
 * workspace's build (`npm test` builds the packages first).
 */
describe('soul init templates pass validate and full local conformance', () => {
  let bundle: string;
  let configDir: string;
  let parent: string;
  let jwksPath: string;
  const children: ChildProcess[] = [];

  const soul = (args: string[], cwd: string, env: Record<string, string> = {}) =>
    startSoul(bundle, args, { cwd, env: { SOUL_CONFIG_DIR: configDir, ...env } }).done;

  async function freePort(): Promise<number> {
    const server = createNetServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }

  /** `node server.js` in the project, as `npm start` runs it; resolves once it accepts connections. */
  async function startRuntime(dir: string, env: Record<string, string>): Promise<string> {
    const port = await freePort();
    const child = spawn(process.execPath, ['server.js'], {
      cwd: dir,
      env: { PATH: process.env.PATH, PORT: String(port), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const url = `http://127.0.0.1:${port}`;
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`server.js exited ${child.exitCode}: ${output}`);
        return fetch(`${url}/capabilities/none/execute`, { method: 'POST' }).then(
          () => true,
          () => false,
        );
      },
      { what: `the ${dir} runtime to listen` },
    );
    return url;
  }

  beforeAll(async () => {
    bundle = bundleSoulCli('soul-cli-templates-e2e');
    configDir = mkdtempSync(join(tmpdir(), 'soul-templates-config-'));
    mkdirSync(join(ROOT, 'tmp'), { recursive: true });
    parent = mkdtempSync(join(ROOT, 'tmp', 'soul-init-'));
    jwksPath = (await soul(['conformance', '--print-jwks-path'], parent)).stdout.trim();
  }, 60_000);

  afterAll(() => {
    for (const child of children) child.kill();
    rmSync(parent, { recursive: true, force: true });
  });

  it.each(['state', 'action', 'history', 'realtime', 'webhook'])(
    '%s: init, its own tests, validate and the full conformance suite',
    async (mode) => {
      const dir = join(parent, `acme-${mode}`);
      const made = jsonOf(await soul(['init', dir, '--mode', mode], parent));
      expect(made).toMatchObject({ dir, mode, name: `acme-${mode}` });
      expect(readdirSync(dir).sort()).toEqual(
        expect.arrayContaining(['.gitignore', 'README.md', 'package.json', 'server.js', 'soul-package.json', 'test']),
      );
      expect(readFileSync(join(dir, 'package.json'), 'utf8')).not.toContain('{{');

      const tests = await new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(process.execPath, ['--test'], { cwd: dir, env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.on('close', (code) => resolve({ code, output }));
      });
      expect({ code: tests.code, output: tests.code === 0 ? '' : tests.output }).toEqual({ code: 0, output: '' });

      const validated = jsonOf(await soul(['validate'], dir));
      expect(validated.local).toMatchObject({ passed: true });

      // As the service makes them: whsec_ and base64 of 32 random bytes.
      const secret = `whsec_${randomBytes(32).toString('base64')}`;
      const url = await startRuntime(dir, { SOUL_LOCAL_JWKS: jwksPath, SOUL_APP_ID: 'app_local', SOUL_WEBHOOK_SECRET: secret });
      const args = ['conformance', '--url', url, ...(mode === 'webhook' ? ['--webhook-url', `${url}/webhooks`] : [])];
      const report = jsonOf(await soul(args, dir, { SOUL_WEBHOOK_SECRET: secret }));
      expect(report.verdict).toMatchObject({ passed: true, full: true });
      const failed = Object.values<{ checks: Array<{ id: string; passed: boolean; detail: string }> }>(report.verdict.dimensions)
        .flatMap((dimension) => dimension.checks)
        .filter((check) => !check.passed);
      expect(failed).toEqual([]);
      expect(report.verdict.score).toBe(100);
      for (const dimension of Object.values<{ ran: boolean }>(report.verdict.dimensions)) expect(dimension.ran).toBe(true);
      expect(report.not_judged_locally.map((item: { id: string }) => item.id)).toEqual(['security.tls']);
    },
    60_000,
  );
});
