import { cachedValidatorFor, checkSchema, jsonPath } from '../../src/modules/packages/schema-checker';

const base = { type: 'object', properties: { amount: { type: 'number', minimum: 0, description: 'Amount' } }, required: ['amount'] };

describe('capability schema checker', () => {
  it('accepts a well-formed draft-07 schema and a 2020-12 schema with if/then/else', () => {
    expect(checkSchema(base)).toBeNull();
    expect(
      checkSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { kind: { type: 'string' }, amount: { type: 'number' } },
        if: { properties: { kind: { const: 'refund' } } },
        then: { required: ['amount'] },
      }),
    ).toBeNull();
  });

  it.each([
    ['another draft', { ...base, $schema: 'http://json-schema.org/draft-04/schema#' }, '$.$schema', /not supported/],
    [
      'if/then/else in draft-07 mode',
      { ...base, if: { properties: { amount: { const: 1 } } }, then: { required: ['x'] } },
      '$.if',
      /draft-07/,
    ],
    ['a property without type', { type: 'object', properties: { amount: { description: 'no type' } } }, '$.properties.amount', /no type/],
    [
      'an unknown keyword',
      { ...base, properties: { amount: { type: 'number', precision: 2 } } },
      '$.properties.amount.precision',
      /unknown keyword "precision"/,
    ],
    [
      'a circular $ref',
      {
        type: 'object',
        definitions: { node: { type: 'object', properties: { next: { $ref: '#/definitions/node' } } } },
        properties: { head: { $ref: '#/definitions/node' } },
      },
      '$.definitions.node.properties.next.$ref',
      /circular/,
    ],
    [
      'a $ref that does not resolve',
      { type: 'object', properties: { a: { $ref: '#/definitions/missing' } } },
      '$.properties.a.$ref',
      /does not resolve/,
    ],
    ['a remote $ref', { type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } }, '$.properties.a.$ref', /outside/],
    ['a non-object root', { type: 'array', items: { type: 'string' } }, '$.type', /type "object"/],
    [
      'a keyword with a wrong value',
      { ...base, properties: { amount: { type: 'number', minimum: 'zero' } } },
      '$.properties.amount.minimum',
      /not valid draft-07/,
    ],
  ])('refuses %s', (_name, schema, path, detail) => {
    const fault = checkSchema(schema);
    expect(fault).toEqual({ schemaPath: path, detail: expect.stringMatching(detail) });
  });

  it('writes JSONPath with brackets for unusual names', () => {
    expect(jsonPath(['properties', 'first name', 'items', 0])).toBe("$.properties['first name'].items[0]");
  });
});

describe('cachedValidatorFor', () => {
  const schema = () => ({ type: 'object', properties: { n: { type: 'number' } }, required: ['n'] });

  it('compiles equal schemas once, even as different objects, and validates like validatorFor', () => {
    const validate = cachedValidatorFor(schema());
    expect(cachedValidatorFor(schema())).toBe(validate);
    expect(validate({ n: 1 })).toEqual({ valid: true, errors: [] });
    expect(validate({ n: 'x' })).toEqual({ valid: false, errors: ['/n must be number'] });
    expect(cachedValidatorFor({ ...schema(), required: [] })).not.toBe(validate);
  });
});
