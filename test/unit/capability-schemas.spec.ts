import { ProblemError } from '../../src/common/errors/problem-error';
import { CapabilityDescriptor } from '@soul-service/rules';
import { normaliseCapabilities } from '../../src/modules/descriptors/descriptor-normalizer';
import { CapabilitySchemas } from '../../src/modules/runtime-bridge/capability-schemas';

const guidance = { intent: 'actionable_insight', placement: ['service_context'], preferredComponents: ['action_row'] };

function capability(type: string, schema: Record<string, unknown>, extra: Record<string, unknown> = {}): CapabilityDescriptor {
  return normaliseCapabilities([
    {
      type,
      name: 'thing',
      description: 'A capability for the schema checks.',
      schema,
      surfaceGuidance: guidance,
      ...(type === 'state' ? { refreshInterval: 60 } : {}),
      ...extra,
    },
  ])[0];
}

function refusal(run: () => void): ProblemError {
  try {
    run();
  } catch (error) {
    if (error instanceof ProblemError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('capability schemas at run time', () => {
  const booking = capability('action', {
    type: 'object',
    properties: {
      id: { type: 'string', format: 'uuid', description: 'Booking id.' },
      site: { type: 'string', format: 'uri', description: 'Where.' },
      day: { type: 'string', format: 'date', description: 'When.' },
      guests: {
        type: 'array',
        description: 'Who.',
        maxItems: 2,
        items: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      },
    },
    required: ['id'],
  });

  it('refuses a UUID that is not lowercase with hyphens, a URL without scheme and a date not in ISO 8601 with invalid_format', () => {
    const base = { id: '6f1c2a9e-3b4d-4c5e-8f70-1a2b3c4d5e6f' };
    expect(CapabilitySchemas.checkRequest(booking, base).valid).toBe(true);
    for (const [input, field] of [
      [{ id: '6F1C2A9E-3B4D-4C5E-8F70-1A2B3C4D5E6F' }, 'input.id'],
      [{ id: '6f1c2a9e3b4d4c5e8f701a2b3c4d5e6f' }, 'input.id'],
      [{ ...base, site: 'example.com/path' }, 'input.site'],
      [{ ...base, day: '25/11/2026' }, 'input.day'],
    ] as const) {
      const problem = refusal(() => CapabilitySchemas.assertRequest(booking, input));
      expect(problem.code).toBe('invalid_format');
      expect(problem.extras.field).toBe(field);
    }
  });

  it('names nested fields and their schema path, and reports a missing required field before other faults', () => {
    const nested = refusal(() =>
      CapabilitySchemas.assertRequest(booking, { id: '6f1c2a9e-3b4d-4c5e-8f70-1a2b3c4d5e6f', guests: [{ name: 'A' }, {}] }),
    );
    expect(nested).toMatchObject({ code: 'missing_field', extras: { field: 'input.guests[1].name' } });
    expect(nested.extras.schema_path).toBe('$.properties.guests.items.properties.name');
    const both = refusal(() => CapabilitySchemas.assertRequest(booking, { site: 'nope' }));
    expect(both).toMatchObject({ code: 'missing_field', extras: { field: 'input.id', schema_path: '$.properties.id' } });
    expect((both.extras.errors as unknown[]).length).toBe(2);
  });

  it('checks a state answer against responseSchema when declared, else against schema', () => {
    const bare = capability('state', { type: 'object', properties: { level: { type: 'integer', maximum: 10 } }, required: ['level'] });
    expect(CapabilitySchemas.checkAnswer(bare, { data: { level: 3 } }).valid).toBe(true);
    expect(CapabilitySchemas.checkAnswer(bare, { data: { level: 11 } }).violations[0]).toMatchObject({
      code: 'invalid_format',
      field: 'data.level',
    });
    expect(CapabilitySchemas.checkAnswer(bare, { data: {} }).violations[0]).toMatchObject({ code: 'missing_field', field: 'data.level' });
    const declared = capability(
      'state',
      { type: 'object', properties: { account: { type: 'string' } }, required: ['account'] },
      { responseSchema: { type: 'object', properties: { level: { type: 'integer' } }, required: ['level'] } },
    );
    expect(CapabilitySchemas.checkAnswer(declared, { data: { level: 3 } }).valid).toBe(true);
  });

  it('lets history params carry limit, cursor and direction though the schema omits them, typed as the contract says', () => {
    const history = capability('history', {
      type: 'object',
      properties: { account: { type: 'string' } },
      additionalProperties: false,
    });
    expect(CapabilitySchemas.checkRequest(history, { account: 'a', limit: 10, cursor: 'abc', direction: 'backward' }).valid).toBe(true);
    expect(CapabilitySchemas.checkRequest(history, { limit: 0 }).violations[0]).toMatchObject({ field: 'params.limit' });
    expect(CapabilitySchemas.checkRequest(history, { other: 1 }).violations[0]).toMatchObject({ field: 'params.other' });
  });

  it('accepts a 2020-12 schema with its own keywords', () => {
    const modern = capability('action', {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { kind: { type: 'string' }, reason: { type: 'string' } },
      if: { properties: { kind: { type: 'string', const: 'refund' } } },
      then: { required: ['reason'] },
    });
    expect(CapabilitySchemas.checkRequest(modern, { kind: 'order' }).valid).toBe(true);
    expect(CapabilitySchemas.checkRequest(modern, { kind: 'refund' }).violations[0]).toMatchObject({
      code: 'missing_field',
      field: 'input.reason',
    });
  });
});
