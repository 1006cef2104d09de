import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, VERSION } from '@soul-service/cli';
import { normaliseCapabilities, RULES_VERSION, staticVerdict } from '@soul-service/rules';
import { ScriptedServer, type Answer, type Received } from '../../api-client/test/scripted-server';
import { TailCursor, LOOKBACK_MS } from '../src/commands/logs';
import { versionBody } from '../src/commands/packages';
import { terminal } from './terminal';

const problem = (code: string, status: number, detail: string, extra: Record<string, unknown> = {}) => ({
  status,
  headers: { 'content-type': 'application/problem+json', 'x-service-request-id': `req_${code.replace(/_/g, '')}0001` },
  body: { type: `https://docs.example.com/developers/errors#${code}`, title: code, status, detail, ...extra },
});
/** `{ error }` that `--json` writes on stderr. */
interface ErrorOutput {
  error: { code: string; detail: string; hint?: string; status?: number; request_id?: string; field_errors?: unknown[] };
}
const errorOf = (stderr: string) => (JSON.parse(stderr) as ErrorOutput).error;

const account = { id: 'dev_1', email: 'ada@example.com', company_name: 'Acme', email_verified: true, mfa_enabled: true, status: 'active' };

describe('soul CLI: arguments, output and exit codes', () => {
  let server: ScriptedServer;
  let configDir: string;
  const env = (extra: Record<string, string> = {}) => ({ SOUL_BASE_URL: server.url, SOUL_CONFIG_DIR: configDir, ...extra });

  beforeAll(async () => {
    server = await ScriptedServer.start();
  });
  afterAll(() => server.close());
  beforeEach(() => {
    configDir = mkdtempSync(join(tmpdir(), 'soul-cli-'));
  });

  const route = (table: Record<string, Answer | ((r: Received) => Answer)>) =>
    server.answer((r) => {
      const entry = table[`${r.method} ${r.path.split('?')[0]}`];
      if (!entry) return { status: 404, body: { error: { code: 'NOT_FOUND', message: `no route ${r.method} ${r.path}`, status: 404 } } };
      return typeof entry === 'function' ? entry(r) : entry;
    });

  describe('usage (exit 2)', () => {
    it('lists the commands without one, and exits 2', async () => {
      const t = terminal(env(), true);
      expect(await run([], t.io)).toBe(2);
      expect(t.stdout()).toContain('logs tail');
      expect(t.stdout()).toContain('Exit codes: 0 done, 1');
    });

    it('shows one command’s help with --help and with help <command>, exit 0', async () => {
      for (const argv of [
        ['push', '--help'],
        ['help', 'push'],
      ]) {
        const t = terminal(env(), true);
        expect(await run(argv, t.io)).toBe(0);
        expect(t.stdout()).toContain('Usage: soul push [descriptor.json] [options]');
        expect(t.stdout()).toContain('--version-number <x.y.z>');
      }
    });

    it('refuses an unknown command, an unknown option and a missing argument as usage errors (JSON in CI)', async () => {
      const cases: Array<[string[], RegExp]> = [
        [['deploy'], /Unknown command: deploy/],
        [['push', '--force'], /Unknown option '--force'/],
        [['trigger'], /trigger needs <event_type>/],
        [['logs', 'tail', '--status', 'weird'], /--status must be one of ok, degraded/],
      ];
      for (const [argv, message] of cases) {
        const t = terminal(env({ CI: 'true', SOUL_TOKEN: 'tok' }));
        expect(await run(argv, t.io)).toBe(2);
        const error = errorOf(t.stderr());
        expect(error.code).toBe('usage');
        expect(error.detail).toMatch(message);
        expect(t.stdout()).toBe('');
      }
    });

    it('never prompts in CI: a missing credential is a usage error naming SOUL_TOKEN', async () => {
      const t = terminal(env({ CI: 'true' }), true);
      expect(await run(['whoami'], t.io)).toBe(2);
      expect(errorOf(t.stderr())).toMatchObject({ code: 'usage', hint: expect.stringContaining('Set SOUL_TOKEN') as unknown });
      const login = terminal(env(), false);
      expect(await run(['login'], login.io)).toBe(2);
      expect(errorOf(login.stderr()).detail).toMatch(/cannot prompt here/);
    });

    it('prints its version', async () => {
      const t = terminal(env(), true);
      expect(await run(['--version'], t.io)).toBe(0);
      expect(t.stdout().trim()).toBe(VERSION);
      const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
      expect(VERSION).toBe(manifest.version);
    });
  });

  describe('output', () => {
    it('writes text for a person and one JSON document with --json, the same when stdin is not a terminal', async () => {
      route({ 'GET /v1/providers/account': { status: 200, body: account } });
      const human = terminal(env({ SOUL_TOKEN: 'tok_dev' }), true);
      expect(await run(['whoami'], human.io)).toBe(0);
      expect(human.stdout()).toBe(`ada@example.com (Acme, dev_1) on ${server.url} (token from SOUL_TOKEN).\n`);
      expect(server.received[0].headers.authorization).toBe('Bearer tok_dev');
      expect(server.received[0].headers['user-agent']).toMatch(/^soul-cli\/0\.1\.0 node\//);

      for (const t of [terminal(env({ SOUL_TOKEN: 'tok_dev' }), true), terminal(env({ SOUL_TOKEN: 'tok_dev' }), false)]) {
        expect(await run(t.io.stdin.isTTY ? ['whoami', '--json'] : ['whoami'], t.io)).toBe(0);
        expect(JSON.parse(t.stdout())).toMatchObject({
          kind: 'developer',
          email: 'ada@example.com',
          token_source: 'SOUL_TOKEN',
          base_url: server.url,
        });
      }
    });

    it('exits 1 on a refusal, with the code, the field errors and the request id (text and JSON)', async () => {
      writeFileSync(join(configDir, 'v.json'), JSON.stringify({ version: '2.0.0', capabilities: [{ type: 'state' }] }));
      route({
        'POST /v1/providers/packages/pkg_1/versions': problem('invalid_format', 400, 'The descriptor has 1 error', {
          errors: [{ field: 'capabilities[0].schema', message: 'is required', code: 'missing_field' }],
        }),
      });
      const human = terminal(env({ SOUL_TOKEN: 'tok' }), true);
      expect(await run(['push', join(configDir, 'v.json'), '--package', 'pkg_1'], human.io)).toBe(1);
      expect(human.stderr()).toBe(
        'Error: The descriptor has 1 error (invalid_format)\n  capabilities[0].schema: is required\nRequest id: req_invalidformat0001\n',
      );
      const machine = terminal(env({ SOUL_TOKEN: 'tok', CI: 'true' }), true);
      expect(await run(['push', join(configDir, 'v.json'), '--package', 'pkg_1'], machine.io)).toBe(1);
      expect(errorOf(machine.stderr())).toMatchObject({
        status: 400,
        code: 'invalid_format',
        request_id: 'req_invalidformat0001',
        field_errors: [{ field: 'capabilities[0].schema', message: 'is required', code: 'missing_field' }],
      });
      expect(machine.stdout()).toBe('');
    });

    it('exits 1 with the reason when the service cannot be reached', async () => {
      // A port that was just free: nothing listens there.
      const closed = await ScriptedServer.start();
      await closed.close();
      const t = terminal(env({ SOUL_TOKEN: 'tok', SOUL_BASE_URL: closed.url }));
      expect(await run(['whoami'], t.io)).toBe(1);
      expect(errorOf(t.stderr())).toMatchObject({ code: 'network_error', detail: expect.stringContaining('ECONNREFUSED') as unknown });
    });
  });

  describe('login', () => {
    it('asks email, password and the two-factor code when the account wants one; saves the token 0600', async () => {
      const logins: Array<Record<string, unknown>> = [];
      route({
        'POST /v1/providers/auth/login': (r) => {
          const body = JSON.parse(r.body) as Record<string, unknown>;
          logins.push(body);
          return body.totp === '123456'
            ? { status: 200, body: { token: 'tok_console', token_type: 'Bearer', expires_at: '2999-01-01T00:00:00.000Z' } }
            : problem('mfa_required', 401, 'This account uses two-factor authentication: send the current code as totp');
        },
        'GET /v1/providers/account': (r) =>
          r.headers.authorization === 'Bearer tok_console' ? { status: 200, body: account } : { status: 401 },
      });
      const t = terminal(env(), true);
      const done = run(['login'], t.io);
      // Each answer is typed once its question shows, as a person does.
      const answer = async (question: string, text: string) => {
        const deadline = Date.now() + 3_000;
        while (!t.stderr().includes(question) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
        t.stdin.write(`${text}\n`);
      };
      await answer('Email: ', 'ada@example.com');
      await answer('Password: ', 'secret-password');
      await answer('Two-factor code: ', '123456');
      expect(await done).toBe(0);
      expect(logins).toEqual([
        { email: 'ada@example.com', password: 'secret-password' },
        { email: 'ada@example.com', password: 'secret-password', totp: '123456' },
      ]);
      expect(t.stderr()).toContain('Password: ');
      expect(t.stderr()).toContain('Two-factor code: ');
      expect(t.stderr()).not.toContain('secret-password');
      const file = join(configDir, 'credentials.json');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect((JSON.parse(readFileSync(file, 'utf8')) as { logins: Record<string, unknown> }).logins[server.url]).toEqual({
        token: 'tok_console',
        expires_at: '2999-01-01T00:00:00.000Z',
        email: 'ada@example.com',
      });

      // Later commands use the saved login.
      const later = terminal(env(), true);
      expect(await run(['whoami'], later.io)).toBe(0);
      expect(later.stdout()).toContain('(token from saved login)');
    });

    it('saves a given token only after the service accepted it', async () => {
      route({ 'GET /v1/providers/account': problem('invalid_token', 401, 'The token is not valid') });
      const t = terminal(env({ CI: 'true' }));
      expect(await run(['login', '--token', 'tok_bad'], t.io)).toBe(1);
      expect(() => statSync(join(configDir, 'credentials.json'))).toThrow();
    });

    it('identifies an app token by its app', async () => {
      route({
        'GET /v1/providers/account': problem('insufficient_scope', 403, 'Console tokens only'),
        'GET /v1/providers/apps': { status: 200, body: { apps: [{ id: 'app_1', name: 'Acme Calendar', client_id: 'cid' }] } },
      });
      const t = terminal(env({ CI: 'true' }));
      expect(await run(['login', '--token', 'tok_app'], t.io)).toBe(0);
      expect(JSON.parse(t.stdout())).toMatchObject({ logged_in: true, kind: 'app', id: 'app_1' });
    });
  });

  describe('push and the app default', () => {
    it('sends the version part of a package descriptor, with --version-number over the file', async () => {
      const descriptor = {
        appId: 'app_1',
        name: 'n',
        slug: 's',
        description: 'd',
        riskTier: 'data_only',
        version: '1.1.0',
        runtimeUrl: 'https://r.example',
        capabilities: [{ type: 'state', schema: {} }],
      };
      expect(versionBody(descriptor, undefined)).toEqual({
        version: '1.1.0',
        runtimeUrl: 'https://r.example',
        capabilities: descriptor.capabilities,
      });
      expect(versionBody(descriptor, '2.0.0').version).toBe('2.0.0');
      expect(() => versionBody({ capabilities: [] }, undefined)).toThrow(/names no version number/);

      writeFileSync(join(configDir, 'soul-package.json'), JSON.stringify(descriptor));
      route({ 'POST /v1/providers/packages/pkg_9/versions': { status: 201, body: { id: 'ver_2', version: '2.0.0', state: 'draft' } } });
      const t = terminal(env({ SOUL_TOKEN: 'tok', CI: 'true', SOUL_PACKAGE_ID: 'pkg_9' }));
      expect(await run(['push', join(configDir, 'soul-package.json'), '--version-number', '2.0.0'], t.io)).toBe(0);
      expect(JSON.parse(server.received[0].body)).toEqual({
        version: '2.0.0',
        runtimeUrl: 'https://r.example',
        capabilities: descriptor.capabilities,
      });
      expect(JSON.parse(t.stdout())).toMatchObject({ id: 'ver_2' });
    });

    it('asks which app when the token sees several and none is named', async () => {
      route({
        'GET /v1/providers/apps': {
          status: 200,
          body: {
            apps: [
              { id: 'app_1', name: 'A' },
              { id: 'app_2', name: 'B' },
            ],
          },
        },
      });
      const t = terminal(env({ SOUL_TOKEN: 'tok', CI: 'true' }));
      expect(await run(['trigger', 'install.created'], t.io)).toBe(2);
      expect(errorOf(t.stderr())).toMatchObject({
        detail: expect.stringContaining('--app') as unknown,
        hint: 'Apps: app_1 (A), app_2 (B)',
      });
    });
  });

  describe('logs tail', () => {
    const execution = (id: string, at: string) => ({
      request_id: id,
      created_at: at,
      capability: 'balance',
      mode: 'state',
      outcome: 'ok',
      duration_ms: 5,
      attempts: 1,
      install_id: 'inst_1',
      error_code: null,
    });

    it('shows each execution once, oldest first, and looks back a window for late ones', () => {
      const cursor = new TailCursor();
      expect(cursor.since()).toBeUndefined();
      cursor.skip([execution('req_old', '2030-01-01T00:00:00.000Z')] as never);
      expect(cursor.since()).toBe(new Date(Date.parse('2030-01-01T00:00:00.000Z') - LOOKBACK_MS).toISOString());
      const first = cursor.take([
        execution('req_b', '2030-01-01T00:00:02.000Z'),
        execution('req_a', '2030-01-01T00:00:01.000Z'),
        execution('req_old', '2030-01-01T00:00:00.000Z'),
      ] as never);
      expect(first.map((e) => e.request_id)).toEqual(['req_a', 'req_b']);
      // A call that started before req_b but became visible after it is still shown; the others are not again.
      const second = cursor.take([
        execution('req_b', '2030-01-01T00:00:02.000Z'),
        execution('req_late', '2030-01-01T00:00:01.500Z'),
      ] as never);
      expect(second.map((e) => e.request_id)).toEqual(['req_late']);
    });

    it('polls with the filters, prints new executions as JSON lines and ends on Ctrl-C', async () => {
      let polls = 0;
      route({
        'GET /v1/providers/executions': (r) => {
          const query = new URL(r.path, server.url).searchParams;
          if (query.get('limit') === '1')
            return { status: 200, body: { executions: [execution('req_before', '2030-01-01T00:00:00.000Z')], next_cursor: null } };
          polls += 1;
          // The first read is the window behind the newest call at the start: what was there already is not shown.
          if (polls === 1) {
            const there = [execution('req_before', '2030-01-01T00:00:00.000Z'), execution('req_older', '2029-12-31T23:59:58.000Z')];
            return { status: 200, body: { executions: there, next_cursor: null } };
          }
          const page =
            polls === 2
              ? [execution('req_1', '2030-01-01T00:00:01.000Z')]
              : [execution('req_2', '2030-01-01T00:00:02.000Z'), execution('req_1', '2030-01-01T00:00:01.000Z')];
          return { status: 200, body: { executions: page, next_cursor: null } };
        },
      });
      const t = terminal(env({ SOUL_TOKEN: 'tok', CI: 'true' }));
      const done = run(
        ['logs', 'tail', '--package', 'pkg_1', '--capability', 'balance', '--install', 'inst_1', '--status', 'ok', '--interval', '0.2'],
        t.io,
      );
      const deadline = Date.now() + 5_000;
      while (!t.stdout().includes('req_2') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      t.abort();
      expect(await done).toBe(0);
      expect(
        t
          .stdout()
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { request_id: string }).request_id),
      ).toEqual(['req_1', 'req_2']);
      const query = new URL(server.received[2].path, server.url).searchParams;
      expect(Object.fromEntries(query)).toMatchObject({
        package_id: 'pkg_1',
        capability: 'balance',
        install_id: 'inst_1',
        outcome: 'ok',
        since: new Date(Date.parse('2030-01-01T00:00:00.000Z') - LOOKBACK_MS).toISOString(),
      });
    });
  });

  describe('validate (offline, with the service’s rules)', () => {
    const example = join(__dirname, '..', '..', '..', 'docs', 'examples', 'state', 'package.json');
    const file = (name: string, content: unknown) => {
      const path = join(configDir, name);
      writeFileSync(path, JSON.stringify(content));
      return path;
    };

    it('gives an example package of the docs the verdict of @soul-service/rules, without calling the service (exit 0)', async () => {
      const t = terminal(env({ CI: 'true' }));
      const calls = server.received.length;
      expect(await run(['validate', example], t.io)).toBe(0);
      const report = JSON.parse(t.stdout()) as { local: Record<string, unknown>; server?: unknown };
      const descriptor = JSON.parse(readFileSync(example, 'utf8')) as { riskTier: string; capabilities: unknown[] };
      expect(report.local).toEqual(
        staticVerdict({ riskTier: descriptor.riskTier, capabilities: normaliseCapabilities(descriptor.capabilities) }),
      );
      expect(report.local).toMatchObject({ passed: true, rulesVersion: RULES_VERSION });
      expect(report.server).toBeUndefined();
      expect(server.received.length).toBe(calls);
    });

    it('lists every field the contract refuses, as the service’s 400 does (exit 1)', async () => {
      const bad = file('bad.json', { version: '1.0.0', capabilities: [{ type: 'state', nmae: 'typo', schema: { type: 'object' } }] });
      const t = terminal(env({ CI: 'true' }));
      expect(await run(['validate', bad, '--risk-tier', 'data_only'], t.io)).toBe(1);
      const error = errorOf(t.stderr());
      expect(error.code).toBe('invalid_format');
      expect(JSON.stringify(error.field_errors)).toContain('nmae');
    });

    it('exits 1 with validation_failed when the descriptor scores under the gate, after printing the verdict', async () => {
      const descriptor = JSON.parse(readFileSync(example, 'utf8')) as { capabilities: Array<Record<string, unknown>> };
      const poor = file('poor.json', {
        ...descriptor,
        capabilities: descriptor.capabilities.map((c) => ({ ...c, description: 'x', examples: undefined, surfaceGuidance: undefined })),
      });
      const t = terminal(env({ CI: 'true' }));
      expect(await run(['validate', poor], t.io)).toBe(1);
      expect((JSON.parse(t.stdout()) as { local: { passed: boolean } }).local.passed).toBe(false);
      expect(errorOf(t.stderr()).code).toBe('validation_failed');
    });

    it('judges a package file that leaves the app to `packages create` (no appId), as the quickstart’s does', async () => {
      const { appId: _appId, ...withoutApp } = JSON.parse(readFileSync(example, 'utf8')) as Record<string, unknown>;
      const t = terminal(env({ CI: 'true' }));
      expect(await run(['validate', file('no-app.json', withoutApp)], t.io)).toBe(0);
      expect((JSON.parse(t.stdout()) as { local: { passed: boolean } }).local.passed).toBe(true);
    });

    it('asks for a risk tier when a version file names none and no package is given (exit 2)', async () => {
      const version = file('version.json', { version: '1.0.0', capabilities: [] });
      const t = terminal(env({ CI: 'true' }));
      expect(await run(['validate', version], t.io)).toBe(2);
      expect(errorOf(t.stderr()).hint).toContain('--risk-tier');
    });
  });
});
