import { assertDescriptorRequest, DescriptorError, descriptorErrors, normaliseCapabilities, refuseErrors } from '@soul-service/rules';

/** The error a rule throws, or a failure when it throws none or something else. */
function refusal(rule: () => unknown): DescriptorError {
  try {
    rule();
  } catch (error) {
    if (error instanceof DescriptorError) return error;
    throw error;
  }
  throw new Error('the rule accepted the descriptor');
}

const state = (extra: Record<string, unknown> = {}) => ({
  type: 'state',
  schema: { type: 'object', properties: { a: { type: 'string' } } },
  ...extra,
});

describe('DescriptorError: what the rules throw for a refused descriptor (no HTTP in it)', () => {
  it('names the missing field with missing_field', () => {
    const error = refusal(() => normaliseCapabilities([{ schema: { type: 'object' } }]));
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('DescriptorError');
    expect(error).toMatchObject({ code: 'missing_field', detail: 'capabilities[0].type is required', field: 'capabilities[0].type' });
    expect(error.message).toBe(error.detail);
    expect(error.members).toEqual({ field: 'capabilities[0].type' });
    expect(error.schemaPath).toBeUndefined();
    expect(error).not.toHaveProperty('status');
  });

  it('locates a bad capability schema with invalid_schema and a JSONPath into it', () => {
    const error = refusal(() => normaliseCapabilities([state({ schema: { type: 'object', properties: { amount: { minimum: 1 } } } })]));
    expect(error).toMatchObject({ code: 'invalid_schema', field: 'capabilities[0].schema', schemaPath: '$.properties.amount' });
    expect(error.detail).toBe('capabilities[0].schema: property "amount" has no type');
    expect(Object.keys(error.members)).toEqual(['field', 'schema_path']);
  });

  it('refuses a value outside the vocabulary with invalid_format naming the allowed ones', () => {
    const error = refusal(() => normaliseCapabilities([state({ surfaceGuidance: { intent: 'shout' } })]));
    expect(error).toMatchObject({ code: 'invalid_format', field: 'capabilities[0].surfaceGuidance.intent' });
    expect(error.detail).toBe(
      'capabilities[0].surfaceGuidance.intent "shout" is not one of: ambient_context, actionable_insight, notification, deep_dive',
    );
  });

  it('lists every fault of a request body at once, the first one at the top, members in the order the service answers with', () => {
    const body = {
      appId: 'app_1',
      name: 'Acme',
      slug: 'acme',
      description: 'Acme',
      riskTier: 'data_only',
      capabilities: [state({ refreshInterval: 0 }), state({ responseschema: {} })],
    };
    const faults = descriptorErrors('package', body);
    expect(faults.length).toBe(2);
    const error = refusal(() => assertDescriptorRequest('package', body));
    expect(error.code).toBe(faults[0].code);
    expect(error.field).toBe(faults[0].field);
    expect(error.detail).toBe(`${faults[0].message} (and 1 more: see errors)`);
    expect(Object.keys(error.members)).toEqual(['field', 'errors']);
    expect(error.errors).toEqual(faults.map(({ field, schema_path, message, code }) => ({ field, schema_path, message, code })));
    expect(Object.keys(error.errors![0])).toEqual(['field', 'schema_path', 'message', 'code']);
    expect(error.errors![1].message).toBe('`capabilities[1].responseschema` is not a known field; did you mean `responseSchema`?');
  });

  it('puts schema_path at the top only when the first fault is invalid_schema', () => {
    const error = refusal(() =>
      refuseErrors([
        { code: 'invalid_schema', field: 'capabilities[0].schema', schema_path: '$.type', message: 'capabilities[0].schema: bad' },
      ]),
    );
    expect(error.members).toEqual({
      field: 'capabilities[0].schema',
      schema_path: '$.type',
      errors: [{ field: 'capabilities[0].schema', schema_path: '$.type', message: 'capabilities[0].schema: bad', code: 'invalid_schema' }],
    });
  });

  it('throws nothing for no faults', () => {
    expect(() => refuseErrors([])).not.toThrow();
  });
});
