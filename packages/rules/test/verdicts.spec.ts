import {
  assertDescriptorRequest,
  CapabilityDescriptor,
  DIMENSIONS,
  LOCAL_DIMENSIONS,
  normaliseCapabilities,
  RULES_VERSION,
  staticVerdict,
  Verdict,
} from '@soul-service/rules';
import { examplePackages } from './examples';

const check = (verdict: Verdict, id: string) => {
  const found = DIMENSIONS.flatMap((k) => verdict.dimensions[k].checks).find((c) => c.id === id);
  if (!found) throw new Error(`no check ${id}`);
  return found;
};

const verdictOf = (riskTier: string, capabilities: unknown[]) =>
  staticVerdict({ riskTier, capabilities: normaliseCapabilities(capabilities) });

describe('staticVerdict on the example packages of the docs', () => {
  const examples = examplePackages();

  it('finds one example package per capability mode', () => {
    expect(examples.map((e) => e.mode).sort()).toEqual(['action', 'history', 'realtime', 'state', 'webhook']);
  });

  it.each(examples.map((e) => [e.mode, e.body] as const))('passes the %s example with 100 and every local check passed', (_, body) => {
    expect(() => assertDescriptorRequest('package', body)).not.toThrow();
    const verdict = verdictOf(body.riskTier, body.capabilities);
    expect(verdict).toMatchObject({ score: 100, passed: true, full: false, rulesVersion: RULES_VERSION });
    for (const key of LOCAL_DIMENSIONS) {
      const dimension = verdict.dimensions[key];
      expect(dimension.ran).toBe(true);
      expect(dimension.score).toBe(dimension.max);
      expect(dimension.checks.filter((c) => !c.passed)).toEqual([]);
    }
  });

  it('reports the live dimensions as not run and the live contract checks as deferred, each keeping its full-run share out of the max', () => {
    const state = examples.find((e) => e.mode === 'state')!.body;
    const verdict = verdictOf(state.riskTier, state.capabilities);
    expect(verdict.dimensions.performance).toEqual({ score: 0, max: 15, ran: false, checks: [] });
    expect(verdict.dimensions.error_handling).toEqual({ score: 0, max: 15, ran: false, checks: [] });
    expect(verdict.dimensions.security).toEqual({ score: 0, max: 10, ran: false, checks: [] });
    expect(check(verdict, 'contracts.execute')).toMatchObject({ deferred: true, points: 0, max: 0 });
    expect(check(verdict, 'contracts.realtime_stream')).toMatchObject({ passed: true, max: 0 });
    expect(check(verdict, 'contracts.realtime_stream').detail).toMatch(/^not applicable/);
    // 25 contract points minus the shares of execute and response_schema (10 and 4 of weight 23).
    expect(verdict.dimensions.contracts.max).toBe(8);
  });
});

describe('staticVerdict on descriptors that break a rule', () => {
  const state = examplePackages().find((e) => e.mode === 'state')!.body;
  const capabilities = () => JSON.parse(JSON.stringify(state.capabilities)) as Array<Record<string, unknown>>;

  it('scores an action on a data_only package 0 for contracts.risk_tier', () => {
    const action = examplePackages().find((e) => e.mode === 'action')!.body;
    const verdict = verdictOf('data_only', action.capabilities);
    expect(check(verdict, 'contracts.risk_tier')).toMatchObject({ passed: false, points: 0 });
    expect(check(verdict, 'contracts.risk_tier').detail).toMatch(/riskTier data_only cannot carry action capabilities/);
    expect(verdict.score).toBeLessThan(100);
  });

  it('takes documentation points off for a short description and no examples, naming the capability', () => {
    const [first] = capabilities();
    const verdict = verdictOf(state.riskTier, [{ ...first, description: 'Balance', examples: undefined }]);
    expect(check(verdict, 'documentation.descriptions')).toMatchObject({ passed: false, points: 0 });
    expect(check(verdict, 'documentation.descriptions').detail).toBe(
      'balance: description must say what the capability does in at least 20 characters',
    );
    expect(check(verdict, 'documentation.examples')).toMatchObject({ passed: false, detail: 'balance has no examples' });
    expect(verdict.dimensions.documentation.score).toBeLessThan(verdict.dimensions.documentation.max);
  });

  it('fails the verdict when a dimension falls below the floor', () => {
    const [first] = capabilities();
    const undocumented: Record<string, unknown> = {
      ...first,
      description: '',
      examples: undefined,
      surfaceGuidance: { preferredComponents: ['meeting_prep'] },
      schema: { type: 'object', properties: { account: { type: 'string' } } },
      responseSchema: undefined,
    };
    const verdict = verdictOf(state.riskTier, [undocumented]);
    expect(verdict.dimensions.documentation.score).toBeLessThan(5);
    expect(verdict.passed).toBe(false);
  });

  it('gives the same verdict for the short form as for the full form it expands to', () => {
    const short = { type: 'state', name: 'balance', schema: { account: { type: 'string', required: true } } };
    const full = {
      type: 'state',
      name: 'balance',
      schema: { type: 'object', properties: { account: { type: 'string' } }, required: ['account'] },
    };
    expect(verdictOf('data_only', [short])).toEqual(verdictOf('data_only', [full]));
  });

  it('is a pure function of its input: the capabilities are not changed', () => {
    const normalised: CapabilityDescriptor[] = normaliseCapabilities(state.capabilities);
    const before = JSON.stringify(normalised);
    staticVerdict({ riskTier: state.riskTier, capabilities: normalised });
    expect(JSON.stringify(normalised)).toBe(before);
  });
});

describe('RULES_VERSION', () => {
  it('is a <year>.<month>.<n> string, so clients can compare it', () => {
    expect(RULES_VERSION).toMatch(/^\d{4}\.(?:[1-9]|1[0-2])\.[1-9]\d*$/);
  });
});
