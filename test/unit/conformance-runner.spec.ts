import { readFileSync } from 'node:fs';
import { generateKeyPair, KeyLike } from 'jose';
import { createServer, Server, Socket } from 'node:net';
import { join } from 'node:path';
import {
  alteredInput,
  CapabilityDescriptor,
  CheckOutcome,
  ConformanceReport,
  DIMENSION_MAX,
  DIMENSIONS,
  envelopeProblems,
  findCredentials,
  finishReport,
  invalidParamsFor,
  notApplicable,
  notRun,
  RuntimeClient,
  sampleFor,
  scoreDimension,
  SseParser,
  staticContractChecks,
  submissionFault,
  validatorFor,
} from '@soul-service/rules';
import { OutboundHttp } from '../../src/common/http/outbound-http';
import type { AppConfig } from '../../src/config/app-config';
import { RuntimeTokens } from '../../src/modules/access/runtime-tokens';
import type { SigningKeys } from '../../src/modules/access/signing-keys.service';
import { ConformanceRunner } from '../../src/modules/conformance/conformance-runner';
import { normaliseCapabilities } from '../../src/modules/descriptors/descriptor-normalizer';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';

const good = () => normaliseCapabilities(goodPackageCapabilities());
/** Runtime tokens signed with a key of this test's own (no runtime here gets far enough to verify them). */
const unitKeys: { signing?: { kid: string; privateKey: KeyLike } } = {};
const tokens = new RuntimeTokens({ publicBaseUrl: 'https://service.test' } as AppConfig, unitKeys as SigningKeys);
const runner = new ConformanceRunner(new OutboundHttp({ allowPrivateTargets: true }), tokens);
beforeAll(async () => {
  unitKeys.signing = { kid: 'unit', privateKey: (await generateKeyPair('ES256')).privateKey };
});
const check = (report: ConformanceReport, id: string) => {
  const found = DIMENSIONS.flatMap((k) => report.dimensions[k].checks).find((c) => c.id === id);
  if (!found) throw new Error(`no check ${id}`);
  return found;
};
const outcome = (id: string, weight: number, fraction: number): CheckOutcome => ({ id, weight, fraction, detail: id });

describe('conformance scoring', () => {
  it('gives dimension maxima that sum to 100 over exactly the six dimensions', () => {
    expect(DIMENSIONS).toEqual(['schema', 'contracts', 'documentation', 'performance', 'error_handling', 'security']);
    expect(Object.values(DIMENSION_MAX).reduce((a, b) => a + b, 0)).toBe(100);
  });

  it('shares a dimension maximum among its checks by weight, in integers that add up exactly', () => {
    const dimension = scoreDimension(15, [outcome('a', 1, 1), outcome('b', 1, 1), outcome('c', 1, 1), outcome('d', 1, 1)]);
    expect(dimension.checks.map((c) => c.max).reduce((a, b) => a + b, 0)).toBe(15);
    expect(dimension.score).toBe(15);
  });

  it('gives full points only to a check that fully passed, and rounds partial credit down', () => {
    const dimension = scoreDimension(10, [outcome('a', 1, 0.99), outcome('b', 1, 0.5)]);
    expect(dimension.checks).toEqual([
      expect.objectContaining({ id: 'a', passed: false, points: 4, max: 5 }),
      expect.objectContaining({ id: 'b', passed: false, points: 2, max: 5 }),
    ]);
    expect(dimension.score).toBe(6);
  });

  it('hands the weight of a check that does not apply to the others instead of giving free points', () => {
    const dimension = scoreDimension(10, [outcome('a', 2, 0), notApplicable('b', 8, 'no webhook capability')]);
    expect(dimension.checks[1]).toEqual({ id: 'b', passed: true, points: 0, max: 0, detail: 'not applicable: no webhook capability' });
    expect(dimension.checks[0]).toMatchObject({ max: 10, points: 0 });
    expect(dimension.score).toBe(0);
  });

  it("caps a dimension below the floor while a blocking check is not fully passed, keeping each check's points", () => {
    const blocking = (id: string, weight: number, fraction: number): CheckOutcome => ({ ...outcome(id, weight, fraction), blocking: true });
    const passing = scoreDimension(10, [outcome('tls', 2, 1), blocking('creds', 6, 1), blocking('tokens', 2, 1)]);
    expect(passing.score).toBe(10);
    const tokensLost = scoreDimension(10, [outcome('tls', 2, 1), blocking('creds', 6, 1), blocking('tokens', 2, 0.75)]);
    expect(tokensLost.checks.map((c) => c.points)).toEqual([2, 6, 1]);
    expect(tokensLost.score).toBe(4);
    const credsLost = scoreDimension(10, [outcome('tls', 2, 1), blocking('creds', 6, 0), blocking('tokens', 2, 1)]);
    expect(credsLost.score).toBe(4);
    // A blocking check that does not apply blocks nothing; a non-blocking failure is ordinary partial credit.
    const notApplying = scoreDimension(10, [outcome('tls', 2, 0.5), { ...notApplicable('tokens', 2, 'no endpoint'), blocking: true }]);
    expect(notApplying.score).toBe(5);
  });

  it('passes at 80 with no dimension below 5, and fails a dimension below 5 even with an aggregate of 80 or more', () => {
    const full = (scores: number[]) =>
      finishReport(true, Object.fromEntries(DIMENSIONS.map((k, i) => [k, { ...notRun(k), ran: true, score: scores[i] }])) as never);
    expect(full([20, 25, 15, 15, 5, 0]).score).toBe(80);
    const blocked = full([20, 25, 15, 15, 5, 0]);
    expect(blocked.passed).toBe(false);
    expect(submissionFault(blocked)).toBe('dimension_below_threshold');
    const low = full([20, 20, 10, 10, 10, 9]);
    expect(low).toMatchObject({ score: 79, passed: false });
    expect(submissionFault(low)).toBe('conformance_failed');
    const ok = full([20, 25, 10, 10, 10, 5]);
    expect(ok).toMatchObject({ score: 80, passed: true });
    expect(submissionFault(ok)).toBeNull();
  });

  it('normalises a local run over the dimensions that ran and ignores the ones that did not', () => {
    const dimensions = Object.fromEntries(DIMENSIONS.map((k) => [k, notRun(k)])) as ConformanceReport['dimensions'];
    dimensions.schema = { ...dimensions.schema, ran: true, score: 20 };
    dimensions.contracts = { ...dimensions.contracts, ran: true, score: 20 };
    dimensions.documentation = { ...dimensions.documentation, ran: true, score: 9 };
    const report = finishReport(false, dimensions);
    expect(report).toMatchObject({ score: 81, passed: true, full: false });
    expect(submissionFault(report)).toBe('conformance_failed');
  });
});

describe('static conformance checks (local validation)', () => {
  it('scores the good package 100 locally and runs only schema, contracts and documentation', async () => {
    const report = await runner.run({ runtimeUrl: 'https://127.0.0.1:1', riskTier: 'action_capable', capabilities: good(), full: false });
    expect(report).toMatchObject({ score: 100, passed: true, full: false });
    expect(DIMENSIONS.filter((k) => report.dimensions[k].ran)).toEqual(['schema', 'contracts', 'documentation']);
    for (const k of ['performance', 'error_handling', 'security'] as const) {
      expect(report.dimensions[k]).toEqual({ score: 0, max: DIMENSION_MAX[k], ran: false, checks: [] });
    }
    expect(report.dimensions.contracts.checks.map((c) => c.id)).toEqual([
      'contracts.names_unique',
      'contracts.mode_intervals',
      'contracts.response_schema_declared',
      'contracts.risk_tier',
      'contracts.execute',
      'contracts.response_schema',
      'contracts.history_pagination',
      'contracts.realtime_stream',
    ]);
  });

  it('gives a static contract check the same maximum in a quick run as in a full run, leaving the live checks to the full run', async () => {
    const quick = await runner.run({ runtimeUrl: 'https://127.0.0.1:1', riskTier: 'action_capable', capabilities: good(), full: false });
    const checks = quick.dimensions.contracts.checks;
    const live = checks.filter((c) => c.deferred);
    expect(live.map((c) => c.id)).toEqual([
      'contracts.execute',
      'contracts.response_schema',
      'contracts.history_pagination',
      'contracts.realtime_stream',
    ]);
    expect(live.every((c) => c.points === 0 && c.max === 0 && /full run/.test(c.detail))).toBe(true);
    // The quick maximum is the static checks' shares: what they are worth in a full run of the same package.
    const staticMax = checks.filter((c) => !c.deferred).reduce((sum, c) => sum + c.max, 0);
    expect(quick.dimensions.contracts.max).toBe(staticMax);
    expect(staticMax).toBeLessThan(DIMENSION_MAX.contracts);
    const shares = scoreDimension(DIMENSION_MAX.contracts, [
      ...staticContractChecks('action_capable', good()),
      { id: 'contracts.execute', weight: 10, fraction: 1, detail: 'ok' },
      { id: 'contracts.response_schema', weight: 4, fraction: 1, detail: 'ok' },
      { id: 'contracts.history_pagination', weight: 2, fraction: 1, detail: 'ok' },
      { id: 'contracts.realtime_stream', weight: 2, fraction: 1, detail: 'ok' },
    ]);
    for (const check of checks.filter((c) => !c.deferred)) {
      expect(check.max).toBe(shares.checks.find((c) => c.id === check.id)!.max);
    }
    // A small quick maximum is not held against the floor: the full run judges it.
    expect(quick).toMatchObject({ score: 100, passed: true });
  });

  it('finds undescribed properties, required names that are not declared and arrays without items', async () => {
    const [capability] = good();
    const faulty: CapabilityDescriptor = {
      ...capability,
      schema: {
        type: 'object',
        properties: { account: { type: 'string' }, tags: { type: 'array', description: 'Tags.' } },
        required: ['account', 'acount'],
      },
    };
    const report = await runner.run({ runtimeUrl: 'https://x.example', riskTier: 'data_only', capabilities: [faulty], full: false });
    expect(check(report, 'schema.property_descriptions')).toMatchObject({
      passed: false,
      detail: expect.stringContaining('$.properties.account'),
    });
    expect(check(report, 'schema.required_declared')).toMatchObject({ passed: false, detail: expect.stringContaining('"acount"') });
    expect(check(report, 'schema.array_items')).toMatchObject({ passed: false, detail: expect.stringContaining('$.properties.tags') });
    expect(check(report, 'schema.event_schemas')).toMatchObject({ max: 0, detail: 'not applicable: no webhook-mode capability' });
  });

  it('refuses action capabilities in a data_only package', async () => {
    const report = await runner.run({ runtimeUrl: 'https://x.example', riskTier: 'data_only', capabilities: good(), full: false });
    expect(check(report, 'contracts.risk_tier')).toMatchObject({ passed: false, detail: expect.stringContaining('transfer') });
  });

  it('marks down short descriptions, missing examples, examples that do not validate and atypical components', async () => {
    const capabilities = good().map((c) =>
      c.name === 'balance'
        ? { ...c, description: 'Balance.', examples: [{ params: { account: 'brokerage' } }] }
        : c.name === 'transactions'
          ? { ...c, examples: undefined, surfaceGuidance: { ...c.surfaceGuidance, preferredComponents: ['cta_banner' as const] } }
          : c,
    );
    const report = await runner.run({ runtimeUrl: 'https://x.example', riskTier: 'action_capable', capabilities, full: false });
    expect(check(report, 'documentation.descriptions')).toMatchObject({ passed: false, detail: expect.stringContaining('balance') });
    expect(check(report, 'documentation.examples')).toMatchObject({ passed: false, detail: 'transactions has no examples' });
    expect(check(report, 'documentation.examples_valid')).toMatchObject({
      passed: false,
      detail: expect.stringContaining('balance.examples[0]'),
    });
    expect(check(report, 'documentation.components')).toMatchObject({ passed: false, detail: expect.stringContaining('ranked_list') });
    expect(report.dimensions.documentation.score).toBeLessThan(DIMENSION_MAX.documentation);
  });

  it('requires responseSchema for state and history and the interval of each mode', async () => {
    const capabilities = good().map((c) => (c.name === 'balance' ? { ...c, responseSchema: undefined, refreshInterval: undefined } : c));
    const report = await runner.run({ runtimeUrl: 'https://x.example', riskTier: 'action_capable', capabilities, full: false });
    expect(check(report, 'contracts.response_schema_declared')).toMatchObject({
      passed: false,
      detail: expect.stringContaining('balance'),
    });
    expect(check(report, 'contracts.mode_intervals')).toMatchObject({ passed: false, detail: expect.stringContaining('refreshInterval') });
  });
});

describe('conformance helpers', () => {
  it('finds credentials by name without echoing them', () => {
    const token = 'conformance_abcdefghijklmnopqrstuvwx';
    const found = findCredentials(
      JSON.stringify({
        echo: token,
        aws: 'AKIAIOSFODNN7EXAMPLE',
        nested: { password: 'hunter2hunter2' },
        key: '-----BEGIN RSA PRIVATE KEY-----',
      }),
      [{ name: 'the bearer token the service sent', value: token }],
    );
    expect(found).toEqual(
      expect.arrayContaining([
        'the bearer token the service sent',
        'an AWS access key id',
        'a private key',
        'a credential-named field with a value',
      ]),
    );
    expect(found.join(' ')).not.toContain(token);
    expect(findCredentials(JSON.stringify({ available: 1520.75, currency: 'EUR', secretSanta: 'Bob', password_hint: 'pet' }))).toEqual([]);
  });

  it('parses server-sent events split across chunks and line endings', () => {
    const parser = new SseParser();
    expect(parser.push('event: heartbeat\r')).toEqual([]);
    expect(parser.push('\ndata: {"ts":"2024-01-01T00:00:00Z"}\r\n\r\n: comment\nevent: data\ndata: {"a":')).toEqual([
      { event: 'heartbeat', data: '{"ts":"2024-01-01T00:00:00Z"}' },
    ]);
    expect(parser.push('1}\ndata: {"b":2}\n\n')).toEqual([{ event: 'data', data: '{"a":1}\n{"b":2}' }]);
  });

  it('makes params that validate from a schema, invalid params that do not, and a different valid input', () => {
    const transfer = good().find((c) => c.name === 'transfer')!;
    const validate = validatorFor(transfer.schema);
    const sample = sampleFor(transfer.schema) as Record<string, unknown>;
    expect(validate(sample)).toEqual({ valid: true, errors: [] });
    const invalid = invalidParamsFor(transfer.schema, sample)!;
    expect(invalid.field).toBe('toAccount');
    expect(validate(invalid.params).valid).toBe(false);
    const altered = alteredInput(transfer.schema, sample)!;
    expect(validate(altered).valid).toBe(true);
    expect(altered).not.toEqual(sample);
    expect(invalidParamsFor({ type: 'object', properties: {} }, {})).toBeNull();
  });

  it('reads the success envelope of each mode', () => {
    const [balance, transfer, transactions] = good();
    expect(
      envelopeProblems(balance, { status: 'ok', data: {}, ttl: 60, metadata: { source: 's', fetchedAt: '2024-01-01T00:00:00Z' } }),
    ).toEqual([]);
    expect(envelopeProblems(balance, { status: 'ok', data: {}, ttl: 1.5, metadata: { source: 's', fetchedAt: 'yesterday' } })).toEqual([
      'ttl must be a non-negative integer',
      'metadata.fetchedAt must be an ISO 8601 timestamp',
    ]);
    expect(envelopeProblems(transfer, { status: 'ok', result: {} })).toEqual(['message must be a human-readable string']);
    expect(envelopeProblems(transactions, { status: 'ok', items: [], cursor: { hasMore: true, next: '' }, totalCount: 0 })).toEqual([
      'cursor.next must be a string (non-empty while hasMore is true)',
    ]);
  });
});

describe('conformance against runtimes that cannot be used', () => {
  let runtime: ProviderRuntime;
  beforeAll(async () => {
    runtime = await ProviderRuntime.start({ certificate: 'untrusted' });
  });
  afterAll(() => runtime.close());

  it('fails TLS and every live check against a self-signed certificate, explaining why, without throwing', async () => {
    const report = await runner.run({
      runtimeUrl: runtime.url,
      riskTier: 'action_capable',
      capabilities: good(),
      full: true,
      appId: 'app_unit',
    });
    expect(report.passed).toBe(false);
    expect(check(report, 'security.tls')).toMatchObject({
      passed: false,
      points: 0,
      detail: expect.stringMatching(
        /runtime_unavailable: the TLS certificate of 127\.0\.0\.1:\d+ is not trusted \(DEPTH_ZERO_SELF_SIGNED_CERT/,
      ),
    });
    expect(check(report, 'contracts.execute').points).toBe(0);
    // The handshake failed, so no request ever reached the runtime's handler.
    expect(runtime.requests).toEqual([]);
  });

  it('reports a runtime where nothing listens as runtime_unavailable', async () => {
    const closed: Server = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as { port: number };
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const report = await runner.run({
      runtimeUrl: `https://127.0.0.1:${port}`,
      riskTier: 'action_capable',
      capabilities: good(),
      full: true,
      appId: 'app_unit',
    });
    expect(check(report, 'contracts.execute')).toMatchObject({
      passed: false,
      detail: expect.stringContaining(`runtime_unavailable: connection to 127.0.0.1:${port} refused`),
    });
    expect(report.dimensions.security.score).toBe(0);
    expect(report.passed).toBe(false);
  });

  it('gives up after the response timeout with a capability_timeout detail', async () => {
    // Accepts TCP connections and never says a word: the TLS handshake never completes.
    const open = new Set<Socket>();
    const silent: Server = createServer((socket) => open.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      const client = new RuntimeClient({ timeoutMs: 300, maxBytes: 1024, http: new OutboundHttp({ allowPrivateTargets: true }) });
      const exchange = await client.send('probe', `https://127.0.0.1:${port}/capabilities/x/execute`, {
        method: 'POST',
        headers: {},
        body: '{}',
      });
      expect(exchange.failure).toEqual({
        kind: 'timeout',
        detail: `capability_timeout: no complete response from 127.0.0.1:${port} within 0.3 s`,
      });
      expect(exchange.durationMs).toBeLessThan(2_000);
    } finally {
      await new Promise<void>((resolve) => {
        silent.close(() => resolve());
        for (const socket of open) socket.destroy();
      });
    }
  });

  it('does not call an http runtimeUrl, nor a loopback one unless private targets are allowed', async () => {
    const plain = await runner.run({
      runtimeUrl: runtime.url.replace('https:', 'http:'),
      riskTier: 'action_capable',
      capabilities: good(),
      full: true,
      appId: 'app_unit',
    });
    expect(check(plain, 'security.tls').detail).toBe('runtime_unavailable: not called, runtimeUrl must use https (got http)');
    const strict = new ConformanceRunner(new OutboundHttp({ allowPrivateTargets: false }), tokens);
    const loopback = await strict.run({
      runtimeUrl: runtime.url,
      riskTier: 'action_capable',
      capabilities: good(),
      full: true,
      appId: 'app_unit',
    });
    expect(check(loopback, 'contracts.execute').detail).toContain(
      'not called, runtimeUrl must not point at a loopback, private or link-local address',
    );
    expect(runtime.requests).toEqual([]);
  });
});

describe('the descriptor reference (docs/descriptor.md)', () => {
  const text = readFileSync(join(__dirname, '../../docs/descriptor.md'), 'utf8');
  const section = (heading: string) => text.slice(text.indexOf(heading), text.indexOf('\n### ', text.indexOf(heading) + 1));
  const jsonBlocks = (part: string) =>
    [...part.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]) as Record<string, unknown>);

  it.each(['state', 'action', 'history', 'realtime', 'webhook'])(
    'gives a complete %s package that is accepted and scores 100 in local validation',
    async (mode) => {
      const [body] = jsonBlocks(section(`### ${mode}\n`));
      expect(Object.keys(body)).toEqual(['appId', 'name', 'slug', 'description', 'riskTier', 'capabilities']);
      const capabilities = normaliseCapabilities(body.capabilities);
      expect(capabilities.map((c) => c.type)).toEqual([mode]);
      const report = await runner.run({ runtimeUrl: null, riskTier: body.riskTier as string, capabilities, full: false });
      expect(report.dimensions.schema.checks.filter((c) => !c.passed)).toEqual([]);
      expect(report).toMatchObject({ score: 100, passed: true });
    },
  );

  it('shows the stored form of its short-form example exactly as the service stores it', () => {
    const [short, stored] = jsonBlocks(section('### Short form\n'));
    expect(normaliseCapabilities([short])).toEqual([stored]);
  });
});
