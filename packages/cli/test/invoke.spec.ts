import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JSONWebKeySet } from 'jose';
import { run } from '@soul-service/cli';
import { normaliseCapabilities } from '@soul-service/rules';
import { CallContext, CapabilityDescriptor, defineRuntime, EventStream, RuntimeError } from '@soul-service/runtime-sdk';
import { ScriptedServer, type Answer, type Received } from '../../api-client/test/scripted-server';
import { answerProblems, requestFaults } from '../src/commands/invoke';
import { LocalKey } from '../src/local-key';
import { terminal } from './terminal';

interface ErrorOutput {
  error: {
    code: string;
    detail: string;
    hint?: string;
    status?: number;
    request_id?: string;
    field_errors?: Array<Record<string, unknown>>;
  };
}
const errorOf = (stderr: string) => (JSON.parse(stderr) as ErrorOutput).error;

/** A bank's four callable modes and a webhook capability, as a provider's soul-package.json declares them. */
const CAPABILITIES = [
  {
    name: 'balance',
    type: 'state',
    description: 'The available balance of one account',
    schema: {
      type: 'object',
      properties: { account: { type: 'string', enum: ['main', 'savings'] }, currency: { type: 'string', minLength: 3, maxLength: 3 } },
      required: ['account'],
      additionalProperties: false,
    },
    responseSchema: {
      type: 'object',
      properties: { available: { type: 'number' }, currency: { type: 'string' } },
      required: ['available', 'currency'],
    },
  },
  {
    name: 'transfer',
    type: 'action',
    description: 'Moves money to another account',
    schema: {
      type: 'object',
      properties: { amount: { type: 'number', minimum: 1 }, to: { type: 'string' } },
      required: ['amount', 'to'],
    },
    responseSchema: { type: 'object', properties: { transferId: { type: 'string' } }, required: ['transferId'] },
  },
  {
    name: 'statements',
    type: 'history',
    description: 'Past statements of the account',
    schema: { type: 'object', properties: { account: { type: 'string' } } },
    responseSchema: { type: 'object', properties: { month: { type: 'string' } }, required: ['month'] },
  },
  {
    name: 'ticker',
    type: 'realtime',
    description: 'Live exchange rate',
    heartbeatInterval: 5,
    schema: { type: 'object', properties: {} },
    responseSchema: { type: 'object', properties: { rate: { type: 'number' } }, required: ['rate'] },
  },
  {
    name: 'alerts',
    type: 'webhook',
    description: 'Balance alerts the bank pushes',
    schema: { type: 'object', properties: {} },
    events: [{ type: 'balance.low', description: 'The balance fell under the threshold', schema: { type: 'object', properties: {} } }],
  },
];

describe('soul invoke', () => {
  let configDir: string;
  let descriptor: string;
  let keys: JSONWebKeySet;
  let jwksPath: string;
  const servers: Server[] = [];
  /** What the runtime's handlers saw, newest last. */
  const calls: Array<{ capability: string; request: unknown; context: CallContext; body: Record<string, unknown> }> = [];
  /** What the state handler answers: a test swaps in an answer the service would refuse. */
  let balanceAnswer: () => Record<string, unknown> = () => ({ data: { available: 1520.75, currency: 'EUR' } });

  const env = (extra: Record<string, string> = {}) => ({ SOUL_CONFIG_DIR: configDir, CI: 'true', ...extra });
  const seen = (call: { context: CallContext }) => call.context;

  /** An SDK runtime for app_local on 127.0.0.1, trusting the CLI's local key set when given it. */
  async function startRuntime(localKeys?: JSONWebKeySet, options: { checkAnswers?: boolean } = {}): Promise<string> {
    const record = (capability: string, request: unknown, context: CallContext) =>
      calls.push({ capability, request, context, body: JSON.parse(context.rawBody.toString('utf8')) as Record<string, unknown> });
    const runtime = defineRuntime({
      descriptor: { capabilities: CAPABILITIES as CapabilityDescriptor[] },
      serviceUrl: 'https://service.example',
      appId: 'app_local',
      localKeys,
      checkAnswers: options.checkAnswers,
      onError: () => undefined,
      handlers: {
        balance: (params: Record<string, unknown>, context: CallContext) => {
          record('balance', params, context);
          return balanceAnswer() as never;
        },
        transfer: (input: Record<string, unknown>, context: CallContext) => {
          record('transfer', input, context);
          if (input.to === 'closed') throw new RuntimeError('PERMISSION_DENIED', 'the account is closed');
          return { result: { transferId: 'tr_1' }, message: `Sent ${String(input.amount)} to ${String(input.to)}.` };
        },
        statements: (params: Record<string, unknown>, context: CallContext) => {
          record('statements', params, context);
          return { items: [{ month: '2030-01' }, { month: '2030-02' }], next: null, totalCount: 2 };
        },
        ticker: async (stream: EventStream, context: CallContext) => {
          calls.push({ capability: 'ticker', request: null, context, body: {} });
          for (let rate = 1; !stream.signal.aborted; rate += 1) {
            stream.send({ rate });
            await new Promise((resolve) => setTimeout(resolve, 30));
          }
        },
      },
    });
    const server = createServer(runtime.listener());
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  let url: string;

  beforeAll(async () => {
    configDir = mkdtempSync(join(tmpdir(), 'soul-invoke-'));
    ({ jwksPath } = await LocalKey.load({ SOUL_CONFIG_DIR: configDir }));
    keys = JSON.parse(readFileSync(jwksPath, 'utf8')) as JSONWebKeySet;
    descriptor = join(configDir, 'soul-package.json');
    writeFileSync(
      descriptor,
      JSON.stringify({ name: 'Acme Bank', riskTier: 'action_capable', version: '1.0.0', capabilities: CAPABILITIES }),
    );
    url = await startRuntime(keys);
  });

  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  beforeEach(() => {
    calls.length = 0;
    balanceAnswer = () => ({ data: { available: 1520.75, currency: 'EUR' } });
  });

  const invoke = async (args: string[], extra: Record<string, string> = {}) => {
    const t = terminal(env(extra));
    const code = await run(['invoke', ...args, '--descriptor', descriptor], t.io);
    return { code, t };
  };

  describe('against a runtime on this machine (--url)', () => {
    it('calls a state capability exactly as the service does: its headers, its body, a token the runtime verifies', async () => {
      const { code, t } = await invoke(['balance', '--url', url, '--params', '{"account":"main"}']);
      expect(t.stderr()).toBe('');
      expect(code).toBe(0);
      const report = JSON.parse(t.stdout()) as Record<string, unknown>;
      expect(report).toMatchObject({
        capability: 'balance',
        mode: 'state',
        url: `${url}/capabilities/balance/execute`,
        app_id: 'app_local',
        status: 200,
        answer: { status: 'ok', data: { available: 1520.75, currency: 'EUR' } },
        problems: [],
      });
      expect(report.duration_ms).toEqual(expect.any(Number));
      expect(calls).toHaveLength(1);
      const [call] = calls;
      // The runtime verified the token: its claims are the synthetic test install's, test traffic only.
      expect(seen(call)).toMatchObject({
        livemode: false,
        requestId: report.request_id,
        userId: report.user_id,
        installId: report.install_id,
        locale: 'en',
        timezone: 'UTC',
      });
      expect(report.user_id).toMatch(/^usr_test/);
      expect(report.install_id).toMatch(/^inst_test/);
      expect(call.context.headers).toMatchObject({
        authorization: expect.stringMatching(/^Bearer ey/),
        'x-service-request-id': report.request_id,
        'x-service-livemode': 'false',
        'x-service-user-id': report.user_id,
        'content-type': 'application/json',
      });
      expect(call.context.headers['x-service-idempotency-key']).toBeUndefined();
      expect(call.body).toEqual({
        capability: 'balance',
        mode: 'state',
        params: { account: 'main' },
        context: { userId: report.user_id, installId: report.install_id, locale: 'en', timezone: 'UTC' },
      });
    });

    it('sends an action its input with an idempotency key (a fresh one, or the one given), and exits 1 on an error envelope', async () => {
      const first = await invoke(['transfer', '--url', url, '--input', '{"amount":25,"to":"ada"}']);
      expect(first.code).toBe(0);
      const report = JSON.parse(first.t.stdout()) as { idempotency_key: string; answer: unknown };
      expect(report.idempotency_key).toMatch(/^idem_/);
      expect(report.answer).toEqual({ status: 'ok', result: { transferId: 'tr_1' }, message: 'Sent 25 to ada.' });
      expect(calls[0].context.headers['x-service-idempotency-key']).toBe(report.idempotency_key);
      expect(calls[0].context.headers['x-service-user-id']).toBeUndefined();
      expect(calls[0].body).toMatchObject({
        capability: 'transfer',
        mode: 'action',
        input: { amount: 25, to: 'ada' },
        context: { userId: calls[0].context.userId, confirmationId: expect.stringMatching(/^act_/) },
      });

      const inputFile = join(configDir, 'transfer.json');
      writeFileSync(inputFile, JSON.stringify({ amount: 5, to: 'closed' }));
      const refused = await invoke(['transfer', '--url', url, '--input-file', inputFile, '--idempotency-key', 'idem_given_1']);
      expect(refused.code).toBe(1);
      expect(calls[1].context.idempotencyKey).toBe('idem_given_1');
      // The answer is printed (status, envelope), and the error says what the runtime refused.
      expect(JSON.parse(refused.t.stdout())).toMatchObject({
        status: 403,
        idempotency_key: 'idem_given_1',
        answer: { status: 'error', error: { code: 'PERMISSION_DENIED', message: 'the account is closed' } },
      });
      expect(errorOf(refused.t.stderr())).toMatchObject({
        code: 'runtime_error',
        detail: 'The runtime answered 403 PERMISSION_DENIED: the account is closed.',
      });
    });

    it('passes history params (paging included) through untouched', async () => {
      const { code, t } = await invoke(['statements', '--url', url, '--params', '{"account":"main","limit":5,"direction":"backward"}']);
      expect(code).toBe(0);
      expect(calls[0].body).toMatchObject({ mode: 'history', params: { account: 'main', limit: 5, direction: 'backward' } });
      expect(calls[0].context.headers['x-service-user-id']).toBeUndefined();
      expect(JSON.parse(t.stdout())).toMatchObject({ answer: { items: [{ month: '2030-01' }, { month: '2030-02' }] }, problems: [] });
    });

    it('refuses params the schema refuses before any call, field by field as the service does (exit 1)', async () => {
      const { code, t } = await invoke(['balance', '--url', url, '--params', '{"currency":"EURO","extra":1}']);
      expect(code).toBe(1);
      expect(calls).toHaveLength(0);
      const error = errorOf(t.stderr());
      expect(error).toMatchObject({ code: 'missing_field', detail: 'params.account is required (capability balance schema)' });
      expect(error.field_errors).toEqual(
        expect.arrayContaining([
          { field: 'params.account', message: 'is required', code: 'missing_field' },
          { field: 'params.currency', message: 'must NOT have more than 3 characters', code: 'invalid_format' },
        ]),
      );
      expect(error.field_errors![0]).toMatchObject({ code: 'missing_field' });
      expect(t.stdout()).toBe('');
    });

    it('exits 1 when the answer is one the service would refuse (500 execution_failed), after printing it', async () => {
      const lax = await startRuntime(keys, { checkAnswers: false });
      balanceAnswer = () => ({ data: { available: 'plenty' } });
      const { code, t } = await invoke(['balance', '--url', lax, '--params', '{"account":"main"}']);
      expect(code).toBe(1);
      const report = JSON.parse(t.stdout()) as { status: number; problems: string[] };
      expect(report.status).toBe(200);
      expect(report.problems).toEqual([expect.stringMatching(/^data does not match the capability's schema \(.*available must be number/)]);
      expect(errorOf(t.stderr())).toMatchObject({ code: 'invalid_answer', detail: expect.stringContaining('500 execution_failed') });
    });

    it('says how to start a runtime that does not trust the local key (its 401)', async () => {
      const strict = await startRuntime();
      const { code, t } = await invoke(['balance', '--url', strict, '--params', '{"account":"main"}']);
      expect(code).toBe(1);
      expect(JSON.parse(t.stdout())).toMatchObject({ status: 401, answer: { error: { code: 'AUTH_INVALID' } } });
      expect(errorOf(t.stderr()).detail).toContain(`SOUL_LOCAL_JWKS=${jwksPath} and SOUL_APP_ID=app_local`);
    });

    it('reports a runtime that is not running (exit 1)', async () => {
      const gone = await ScriptedServer.start();
      await gone.close();
      const { code, t } = await invoke(['balance', '--url', gone.url, '--params', '{"account":"main"}']);
      expect(code).toBe(1);
      expect(errorOf(t.stderr())).toMatchObject({ code: 'runtime_unavailable', detail: expect.stringContaining('refused') });
    });

    it('streams a realtime capability, one JSON line per event, until --max-events data events', async () => {
      const { code, t } = await invoke(['ticker', '--url', url, '--max-events', '3']);
      expect(t.stderr()).toBe('');
      expect(code).toBe(0);
      const events = t
        .stdout()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { event: string; data: unknown; received_at: string; problems?: string[] });
      // The SDK sends a heartbeat at once; heartbeats are shown and not counted.
      expect(events[0]).toMatchObject({ event: 'heartbeat', data: { ts: expect.any(String) } });
      expect(events.filter((e) => e.event === 'data').map((e) => e.data)).toEqual([{ rate: 1 }, { rate: 2 }, { rate: 3 }]);
      expect(events.every((e) => e.problems === undefined && !Number.isNaN(Date.parse(e.received_at)))).toBe(true);
      expect(calls[0].context.headers).toMatchObject({ accept: 'text/event-stream', 'x-service-livemode': 'false' });
      expect(calls[0].context.headers['x-service-request-id']).toMatch(/^req_/);
    });

    it('ends a stream on Ctrl-C with exit 0', async () => {
      const t = terminal(env());
      const done = run(['invoke', 'ticker', '--url', url, '--descriptor', descriptor], t.io);
      const deadline = Date.now() + 5_000;
      while (!t.stdout().includes('"rate":2') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      t.abort();
      expect(await done).toBe(0);
      expect(t.stdout()).toContain('"rate":1');
    });

    it('refuses a wrong command line before any call (exit 2)', async () => {
      const cases: Array<[string[], RegExp]> = [
        [['nope', '--url', url], /has no capability "nope"/],
        [['alerts', '--url', url], /webhook capability/],
        [['transfer', '--url', url, '--params', '{}'], /is an action: give its input with --input/],
        [['balance', '--url', url, '--input', '{}'], /give its params with --params/],
        [['balance', '--url', url, '--params', '[1]'], /--params must be a JSON object/],
        [['balance', '--url', url, '--params', '{', '--params-file', 'x.json'], /not both/],
        [['balance', '--url', url, '--params', '{oops}'], /--params is not JSON/],
        [['balance', '--url', url, '--max-events', '2'], /--max-events is for realtime/],
        [['ticker', '--url', url, '--max-events', '0'], /--max-events is a number/],
        [['balance', '--url', 'ftp://localhost'], /--url must be http or https/],
        [['balance', '--url', url, '--app', 'acme'], /not an app id/],
        [['balance', '--url', url, '--install', 'inst_1'], /--install is for a call through the service/],
      ];
      for (const [argv, message] of cases) {
        const { code, t } = await invoke(argv);
        expect({ argv, code }).toEqual({ argv, code: 2 });
        expect(errorOf(t.stderr())).toMatchObject({ code: 'usage', detail: expect.stringMatching(message) as unknown });
      }
      const hint = errorOf((await invoke(['nope', '--url', url])).t.stderr()).hint;
      expect(hint).toBe('Capabilities: balance (state), transfer (action), statements (history), ticker (realtime), alerts (webhook)');
      expect(calls).toHaveLength(0);
    });
  });

  describe('through the service (no --url)', () => {
    let service: ScriptedServer;
    beforeAll(async () => {
      service = await ScriptedServer.start();
    });
    afterAll(() => service.close());

    const route = (table: Record<string, Answer | ((r: Received) => Answer)>) =>
      service.answer((r) => {
        const entry = table[`${r.method} ${r.path.split('?')[0]}`];
        if (!entry) return { status: 404 };
        return typeof entry === 'function' ? entry(r) : entry;
      });

    it('executes the published package’s capability for one install with the app token, and prints the answer', async () => {
      route({
        'POST /v1/providers/packages/pkg_1/capabilities/balance/execute': {
          status: 200,
          headers: { 'x-service-request-id': 'req_service0001' },
          body: { requestId: 'req_service0001', status: 'ok', data: { available: 10, currency: 'EUR' }, cached: false },
        },
      });
      const t = terminal(env({ SOUL_BASE_URL: service.url, SOUL_TOKEN: 'tok_app' }));
      const code = await run(['invoke', 'balance', '--package', 'pkg_1', '--install', 'inst_1', '--params', '{"account":"main"}'], t.io);
      expect(t.stderr()).toBe('');
      expect(code).toBe(0);
      expect(service.received[0].headers.authorization).toBe('Bearer tok_app');
      expect(JSON.parse(service.received[0].body)).toEqual({ installId: 'inst_1', params: { account: 'main' } });
      expect(JSON.parse(t.stdout())).toMatchObject({
        capability: 'balance',
        package_id: 'pkg_1',
        install_id: 'inst_1',
        request_id: 'req_service0001',
        status: 200,
        answer: { status: 'ok', data: { available: 10 } },
      });
    });

    it('sends an action’s input and idempotency key for a user, and exits 1 with the service’s refusal', async () => {
      route({
        'POST /v1/providers/packages/pkg_1/capabilities/transfer/execute': {
          status: 403,
          headers: { 'content-type': 'application/problem+json', 'x-service-request-id': 'req_refused0001' },
          body: { type: 'about:blank', title: 'insufficient_scope', status: 403, detail: 'Package pkg_1 belongs to another app' },
        },
      });
      const t = terminal(env({ SOUL_BASE_URL: service.url, SOUL_TOKEN: 'tok_app', SOUL_PACKAGE_ID: 'pkg_1' }));
      const code = await run(
        ['invoke', 'transfer', '--user', 'usr_1', '--input', '{"amount":5,"to":"ada"}', '--idempotency-key', 'k1'],
        t.io,
      );
      expect(code).toBe(1);
      expect(JSON.parse(service.received[0].body)).toEqual({ userId: 'usr_1', input: { amount: 5, to: 'ada' }, idempotencyKey: 'k1' });
      expect(errorOf(t.stderr())).toMatchObject({ status: 403, request_id: 'req_refused0001' });
    });

    it('needs the package and the install or user; local-only options need --url (exit 2)', async () => {
      route({});
      const cases: Array<[string[], RegExp]> = [
        [['balance', '--install', 'inst_1'], /Which package/],
        [['balance', '--package', 'pkg_1'], /Which install/],
        [['balance', '--package', 'pkg_1', '--install', 'inst_1', '--user', 'usr_1'], /not both/],
        [
          ['balance', '--package', 'pkg_1', '--install', 'inst_1', '--descriptor', 'x.json'],
          /--descriptor is for a runtime on this machine/,
        ],
      ];
      for (const [argv, message] of cases) {
        const t = terminal(env({ SOUL_BASE_URL: service.url, SOUL_TOKEN: 'tok_app' }));
        expect(await run(['invoke', ...argv], t.io)).toBe(2);
        expect(errorOf(t.stderr()).detail).toMatch(message);
      }
      expect(service.received).toHaveLength(0);
    });
  });

  describe('checks shared with the service', () => {
    const [balance, transfer, statements] = normaliseCapabilities(CAPABILITIES);

    it('names request faults as the service does, missing fields first', () => {
      expect(requestFaults(transfer, { amount: 0 })).toEqual([
        { field: 'input.to', message: 'is required', code: 'missing_field' },
        { field: 'input.amount', message: 'must be >= 1', code: 'invalid_format' },
      ]);
      expect(requestFaults(balance, { account: 'main' })).toEqual([]);
      // History's paging params are the service's, always allowed.
      expect(requestFaults(statements, { limit: 10, cursor: 'c', direction: 'forward' })).toEqual([]);
    });

    it('judges answers as the service relays them: envelope, schema, the requested page size; degraded passes', () => {
      expect(answerProblems(balance, { status: 'ok', data: { available: 1, currency: 'EUR' } }, {})).toEqual([
        'ttl must be a non-negative integer',
        'metadata must be an object with source and fetchedAt',
      ]);
      const page = {
        status: 'ok',
        items: [{ month: '2030-01' }, { month: '2030-02' }],
        cursor: { next: null, hasMore: false },
        totalCount: 2,
      };
      expect(answerProblems(statements, page, { limit: 2 })).toEqual([]);
      expect(answerProblems(statements, page, { limit: 1 })).toEqual(['items holds 2 items, more than the requested limit of 1']);
      expect(answerProblems(statements, { ...page, items: [{ month: 1 }] }, {})).toEqual([
        expect.stringMatching(/^items\[0\] does not match the capability's schema/),
      ]);
      expect(answerProblems(balance, { status: 'degraded', data: null, error: { code: 'UPSTREAM_UNAVAILABLE' } }, {})).toEqual([]);
    });
  });
});
