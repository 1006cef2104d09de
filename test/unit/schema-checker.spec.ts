import { normaliseCapabilities } from '../../src/modules/descriptors/descriptor-normalizer';
import { ProblemError } from '../../src/common/errors/problem-error';
import { cachedValidatorFor, checkSchema, jsonPath, validatorFor } from '@soul-service/rules';

const base = { type: 'object', properties: { amount: { type: 'number', minimum: 0, description: 'Amount' } }, required: ['amount'] };

describe('capability schema checker', () => {
  it('accepts a well-formed draft-07 schema and a 2020-12 schema with if/then/else', () => {
    expect(checkSchema(base)).toBeNull();
    expect(
      checkSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { kind: { type: 'string' }, amount: { type: 'number' } },
        if: { properties: { kind: { type: 'string', const: 'refund' } } },
        then: { required: ['amount'] },
      }),
    ).toBeNull();
  });

  it('holds properties inside conditionals and combinators to the same rule: type is required there too', () => {
    expect(
      checkSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { kind: { type: 'string' } },
        if: { properties: { kind: { const: 'refund' } } },
        then: { required: ['kind'] },
      }),
    ).toEqual({ detail: expect.stringContaining('property "kind" has no type ("const"'), schemaPath: '$.if.properties.kind' });
    expect(checkSchema({ type: 'object', oneOf: [{ properties: { kind: { enum: ['a'] } } }] })).toEqual({
      detail: expect.stringContaining('("enum" does not replace it'),
      schemaPath: '$.oneOf[0].properties.kind',
    });
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
        definitions: { node: { type: 'object', properties: { next: { type: 'object', $ref: '#/definitions/node' } } } },
        properties: { head: { type: 'object', $ref: '#/definitions/node' } },
      },
      '$.definitions.node.properties.next.$ref',
      /circular/,
    ],
    [
      'a $ref that does not resolve',
      { type: 'object', properties: { a: { type: 'number', $ref: '#/definitions/missing' } } },
      '$.properties.a.$ref',
      /does not resolve/,
    ],
    [
      'a remote $ref',
      { type: 'object', properties: { a: { type: 'object', $ref: 'https://example.com/s.json' } } },
      '$.properties.a.$ref',
      /outside/,
    ],
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

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';
const D07 = 'http://json-schema.org/draft-07/schema#';
/** Any schema below the root, checked without the capability rule that the root is an object. */
const sub = (schema: Record<string, unknown>) => checkSchema(schema, { requireObjectRoot: false });
const unknown = (keyword: string, schemaPath: string, draft = 'draft-07') => ({
  detail: `unknown keyword "${keyword}" for ${draft}`,
  schemaPath,
});

describe('descriptor schema rules (spec: invalid_schema)', () => {
  /** The refusal a capability descriptor gets for `schema`, as the provider platform reports it. */
  const refusalOf = (schema: Record<string, unknown>) => {
    try {
      normaliseCapabilities([
        {
          type: 'action',
          name: 'send',
          description: 'Sends',
          schema,
          surfaceGuidance: { intent: 'actionable_insight', placement: ['service_context'], preferredComponents: ['action_row'] },
        },
      ]);
    } catch (error) {
      const problem = error as ProblemError;
      return { code: problem.code, status: problem.status, field: problem.extras.field, schema_path: problem.extras.schema_path };
    }
    return null;
  };

  it.each(['if', 'then', 'else'])('refuses "%s" in draft-07 mode as a conditional, not as an unknown keyword', (keyword) => {
    const schema = { ...base, [keyword]: { required: ['amount'] } };
    expect(checkSchema(schema)).toEqual({
      detail: `keyword "${keyword}" is not supported in draft-07 mode; declare "$schema": "https://json-schema.org/draft/2020-12/schema" to use if/then/else`,
      schemaPath: `$.${keyword}`,
    });
    expect(checkSchema({ ...schema, $schema: D07 })).toEqual(checkSchema(schema));
    expect(refusalOf(schema)).toEqual({
      code: 'invalid_schema',
      status: 400,
      field: 'capabilities[0].schema',
      schema_path: `$.${keyword}`,
    });
  });

  it('reports every other refusal as invalid_schema with field and schema_path', () => {
    expect(refusalOf({ ...base, $schema: 'http://json-schema.org/draft-04/schema#' })).toEqual({
      code: 'invalid_schema',
      status: 400,
      field: 'capabilities[0].schema',
      schema_path: '$.$schema',
    });
    expect(refusalOf({ type: 'object', properties: { amount: { description: 'no type' } } })).toEqual({
      code: 'invalid_schema',
      status: 400,
      field: 'capabilities[0].schema',
      schema_path: '$.properties.amount',
    });
    expect(refusalOf(base)).toBeNull();
  });

  it.each([
    ...[
      'http://json-schema.org/draft-07/schema#',
      'http://json-schema.org/draft-07/schema',
      'https://json-schema.org/draft-07/schema#',
      'https://json-schema.org/draft-07/schema',
    ].map((uri) => [uri, 'draft-07']),
    ...['https://json-schema.org/draft/2020-12/schema', 'https://json-schema.org/draft/2020-12/schema#'].map((uri) => [uri, '2020-12']),
  ])('accepts $schema %s and applies %s rules', (uri, draft) => {
    expect(checkSchema({ ...base, $schema: uri })).toBeNull();
    const conditional = checkSchema({ ...base, $schema: uri, if: { required: ['amount'] }, then: { required: ['amount'] } });
    if (draft === '2020-12') expect(conditional).toBeNull();
    else
      expect(conditional).toEqual(
        expect.objectContaining({ schemaPath: '$.if', detail: expect.stringContaining('not supported in draft-07 mode') }),
      );
  });

  it.each([
    ['draft-04', 'http://json-schema.org/draft-04/schema#', '"http://json-schema.org/draft-04/schema#"'],
    ['2019-09', 'https://json-schema.org/draft/2019-09/schema', '"https://json-schema.org/draft/2019-09/schema"'],
    ['a number', 7, '7'],
    ['null', null, 'null'],
  ])('refuses $schema %s', (_name, uri, shown) => {
    expect(checkSchema({ ...base, $schema: uri })).toEqual({
      detail: `$schema ${shown} is not supported; use draft-07 or 2020-12`,
      schemaPath: '$.$schema',
    });
  });

  it('treats a schema without $schema as draft-07', () => {
    expect(checkSchema(base)).toBeNull();
    expect(checkSchema({ ...base, $defs: {} })).toEqual(unknown('$defs', '$.$defs'));
  });

  it('requires an object root unless told otherwise', () => {
    const array = { type: 'array', items: { type: 'string' } };
    const fault = { detail: 'the capability schema must have type "object"', schemaPath: '$.type' };
    expect(checkSchema(array)).toEqual(fault);
    expect(checkSchema(array, {})).toEqual(fault);
    expect(checkSchema(array, { requireObjectRoot: true })).toEqual(fault);
    expect(checkSchema(array, { requireObjectRoot: false })).toBeNull();
    expect(checkSchema({ properties: { a: { type: 'string' } } })).toEqual(fault);
  });

  it.each([
    ['an array', [{ type: 'object' }]],
    ['null', null],
    ['a string', 'object'],
  ])('refuses %s as the schema', (_name, schema) => {
    expect(checkSchema(schema)).toEqual({ detail: 'schema must be a JSON Schema object', schemaPath: '$' });
  });

  /** Keywords of both drafts, each in a place it belongs. */
  const common: Array<[string, Record<string, unknown>]> = [
    ['$schema', { $schema: D07 }],
    ['$id', { $id: 'https://example.com/s.json' }],
    ['$ref', { definitions: { n: { type: 'number' } }, properties: { a: { type: 'number', $ref: '#/definitions/n' } } }],
    ['$comment', { $comment: 'note' }],
    ['title', { title: 'T' }],
    ['description', { description: 'D' }],
    ['default', { properties: { a: { type: 'number', default: 1 } } }],
    ['examples', { examples: [{}] }],
    ['readOnly', { properties: { a: { type: 'number', readOnly: true } } }],
    ['writeOnly', { properties: { a: { type: 'number', writeOnly: true } } }],
    ['type', { type: 'object' }],
    ['enum', { properties: { a: { type: 'string', enum: ['x', 'y'] } } }],
    ['const', { properties: { a: { type: 'string', const: 'x' } } }],
    ['multipleOf', { properties: { a: { type: 'number', multipleOf: 2 } } }],
    ['maximum', { properties: { a: { type: 'number', maximum: 2 } } }],
    ['exclusiveMaximum', { properties: { a: { type: 'number', exclusiveMaximum: 2 } } }],
    ['minimum', { properties: { a: { type: 'number', minimum: 2 } } }],
    ['exclusiveMinimum', { properties: { a: { type: 'number', exclusiveMinimum: 2 } } }],
    ['maxLength', { properties: { a: { type: 'string', maxLength: 2 } } }],
    ['minLength', { properties: { a: { type: 'string', minLength: 2 } } }],
    ['pattern', { properties: { a: { type: 'string', pattern: '^x' } } }],
    ['format', { properties: { a: { type: 'string', format: 'email' } } }],
    ['items', { properties: { a: { type: 'array', items: { type: 'string' } } } }],
    ['maxItems', { properties: { a: { type: 'array', maxItems: 2 } } }],
    ['minItems', { properties: { a: { type: 'array', minItems: 2 } } }],
    ['uniqueItems', { properties: { a: { type: 'array', uniqueItems: true } } }],
    ['contains', { properties: { a: { type: 'array', contains: { type: 'string' } } } }],
    ['maxProperties', { maxProperties: 2 }],
    ['minProperties', { minProperties: 1 }],
    ['required', { properties: { a: { type: 'string' } }, required: ['a'] }],
    ['additionalProperties', { additionalProperties: { type: 'string' } }],
    ['properties', { properties: { a: { type: 'string' } } }],
    ['patternProperties', { patternProperties: { '^x': { type: 'string' } } }],
    ['propertyNames', { propertyNames: { type: 'string', maxLength: 3 } }],
    ['allOf', { allOf: [{ required: [] }] }],
    ['anyOf', { anyOf: [{ required: [] }] }],
    ['oneOf', { oneOf: [{ required: [] }] }],
    ['not', { not: { required: ['x'] } }],
    ['contentMediaType', { properties: { a: { type: 'string', contentMediaType: 'application/json' } } }],
    ['contentEncoding', { properties: { a: { type: 'string', contentEncoding: 'base64' } } }],
    ['definitions', { definitions: { n: { type: 'number' } } }],
  ];
  const draft07Only: Array<[string, Record<string, unknown>]> = [
    ['additionalItems', { properties: { a: { type: 'array', items: [{ type: 'string' }], minItems: 1, additionalItems: false } } }],
    ['dependencies', { properties: { a: { type: 'string' }, b: { type: 'string' } }, dependencies: { a: ['b'] } }],
  ];
  const draft2020Only: Array<[string, Record<string, unknown>]> = [
    ['$defs', { $defs: { n: { type: 'number' } }, properties: { a: { type: 'number', $ref: '#/$defs/n' } } }],
    ['$anchor', { $defs: { n: { $anchor: 'num', type: 'number' } } }],
    ['$dynamicRef', { $dynamicAnchor: 'node', properties: { a: { type: 'object', $dynamicRef: '#node' } } }],
    ['$dynamicAnchor', { $dynamicAnchor: 'node' }],
    ['$vocabulary', { $vocabulary: { 'https://json-schema.org/draft/2020-12/vocab/core': true } }],
    ['if', { if: { required: ['a'] }, then: { required: ['b'] } }],
    ['then', { if: { required: ['a'] }, then: { required: ['b'] } }],
    ['else', { if: { required: ['a'] }, else: { required: ['b'] } }],
    ['dependentSchemas', { dependentSchemas: { a: { required: ['b'] } } }],
    ['dependentRequired', { dependentRequired: { a: ['b'] } }],
    ['prefixItems', { properties: { a: { type: 'array', prefixItems: [{ type: 'string' }], minItems: 1, items: false } } }],
    ['unevaluatedItems', { properties: { a: { type: 'array', unevaluatedItems: false } } }],
    ['unevaluatedProperties', { unevaluatedProperties: false }],
    ['minContains', { properties: { a: { type: 'array', contains: { type: 'string' }, minContains: 1 } } }],
    ['maxContains', { properties: { a: { type: 'array', contains: { type: 'string' }, maxContains: 2 } } }],
    ['deprecated', { properties: { a: { type: 'string', deprecated: true } } }],
  ];

  it.each([...common, ...draft07Only])('accepts %s in draft-07 mode', (_keyword, extra) => {
    expect(checkSchema({ type: 'object', ...extra })).toBeNull();
  });

  it.each([...common.filter(([k]) => k !== '$schema'), ...draft2020Only])('accepts %s in 2020-12 mode', (_keyword, extra) => {
    expect(checkSchema({ $schema: DRAFT_2020, type: 'object', ...extra })).toBeNull();
  });

  const draft2020Refusals: Array<[string, Record<string, unknown>, string]> = [
    ['$anchor', { properties: { a: { type: 'string', $anchor: 'x' } } }, '$.properties.a.$anchor'],
    ['$dynamicRef', { properties: { a: { type: 'object', $dynamicRef: '#x' } } }, '$.properties.a.$dynamicRef'],
    ...draft2020Only
      .filter(([k]) => !['if', 'then', 'else', '$anchor', '$dynamicRef'].includes(k))
      .map(([k, extra]): [string, Record<string, unknown>, string] => [
        k,
        extra,
        Object.keys(extra).includes(k) ? jsonPath([k]) : jsonPath(['properties', 'a', k]),
      ]),
  ];

  it.each(draft2020Refusals)('refuses 2020-12 keyword %s in draft-07 mode', (keyword, extra, schemaPath) => {
    expect(checkSchema({ type: 'object', ...extra })).toEqual(unknown(keyword, schemaPath));
  });

  it.each(draft07Only)('refuses draft-07 keyword %s in 2020-12 mode', (keyword, extra) => {
    const fault = checkSchema({ $schema: DRAFT_2020, type: 'object', ...extra });
    expect(fault).toEqual({
      detail: `unknown keyword "${keyword}" for 2020-12`,
      schemaPath: expect.stringMatching(new RegExp(`\\.${keyword}$`)),
    });
  });

  it.each([
    ['properties', { properties: { a: { type: 'string', bogus: 1 } } }, '$.properties.a.bogus'],
    ['patternProperties', { patternProperties: { '^x': { type: 'string', bogus: 1 } } }, "$.patternProperties['^x'].bogus"],
    ['definitions', { definitions: { d: { type: 'string', bogus: 1 } } }, '$.definitions.d.bogus'],
    ['items (single)', { items: { type: 'string', bogus: 1 } }, '$.items.bogus'],
    ['items (tuple)', { items: [{ type: 'string' }, { type: 'string', bogus: 1 }] }, '$.items[1].bogus'],
    ['additionalItems', { items: [{ type: 'string' }], additionalItems: { bogus: 1 } }, '$.additionalItems.bogus'],
    ['additionalProperties', { additionalProperties: { type: 'string', bogus: 1 } }, '$.additionalProperties.bogus'],
    ['contains', { contains: { bogus: 1 } }, '$.contains.bogus'],
    ['propertyNames', { propertyNames: { bogus: 1 } }, '$.propertyNames.bogus'],
    ['not', { not: { bogus: 1 } }, '$.not.bogus'],
    ['allOf', { allOf: [{}, { bogus: 1 }] }, '$.allOf[1].bogus'],
    ['anyOf', { anyOf: [{}, { bogus: 1 }] }, '$.anyOf[1].bogus'],
    ['oneOf', { oneOf: [{}, { bogus: 1 }] }, '$.oneOf[1].bogus'],
    [
      'a nested chain',
      { properties: { a: { type: 'array', items: { anyOf: [{ not: { bogus: 1 } }] } } } },
      '$.properties.a.items.anyOf[0].not.bogus',
    ],
  ])('walks into %s in draft-07 mode', (_where, schema, schemaPath) => {
    expect(sub(schema)).toEqual(unknown('bogus', schemaPath));
  });

  it.each([
    ['$defs', { $defs: { d: { bogus: 1 } } }, '$.$defs.d.bogus'],
    ['prefixItems', { prefixItems: [{}, { bogus: 1 }] }, '$.prefixItems[1].bogus'],
    ['dependentSchemas', { dependentSchemas: { a: { bogus: 1 } } }, '$.dependentSchemas.a.bogus'],
    ['if', { if: { bogus: 1 } }, '$.if.bogus'],
    ['then', { if: {}, then: { bogus: 1 } }, '$.then.bogus'],
    ['else', { if: {}, else: { bogus: 1 } }, '$.else.bogus'],
    ['unevaluatedItems', { unevaluatedItems: { bogus: 1 } }, '$.unevaluatedItems.bogus'],
    ['unevaluatedProperties', { unevaluatedProperties: { bogus: 1 } }, '$.unevaluatedProperties.bogus'],
    ['items', { items: { bogus: 1 } }, '$.items.bogus'],
  ])('walks into %s in 2020-12 mode', (_where, schema, schemaPath) => {
    expect(sub({ $schema: DRAFT_2020, ...schema })).toEqual(unknown('bogus', schemaPath, '2020-12'));
  });

  it('finds an untyped property at any depth', () => {
    expect(sub({ items: [{ type: 'object', properties: { a: {} } }] })).toEqual({
      detail: 'property "a" has no type',
      schemaPath: '$.items[0].properties.a',
    });
    expect(sub({ $schema: DRAFT_2020, prefixItems: [{ type: 'object', properties: { 'a b': {} } }] })).toEqual({
      detail: 'property "a b" has no type',
      schemaPath: "$.prefixItems[0].properties['a b']",
    });
  });

  it('accepts a valid tuple and walks each of its items', () => {
    expect(sub({ type: 'array', items: [{ type: 'string' }, { type: 'number' }], minItems: 2, additionalItems: false })).toBeNull();
    expect(sub({ type: 'array', items: [true, 5], minItems: 2, additionalItems: false })).toEqual({
      detail: 'a subschema must be an object or a boolean',
      schemaPath: '$.items[1]',
    });
  });

  it.each([
    ['$ref', { $ref: '#/definitions/n' }],
    ['enum', { enum: [1, 2] }],
    ['const', { const: 1 }],
    ['anyOf', { anyOf: [{ type: 'string' }, { type: 'number' }] }],
    ['oneOf', { oneOf: [{ type: 'string' }, { type: 'number' }] }],
    ['allOf', { allOf: [{ type: 'string' }] }],
  ])('refuses a property with %s but no type, saying that type must be declared beside it', (keyword, property) => {
    expect(checkSchema({ type: 'object', definitions: { n: { type: 'number' } }, properties: { a: property } })).toEqual({
      detail: `property "a" has no type ("${keyword}" does not replace it; declare "type" beside it)`,
      schemaPath: '$.properties.a',
    });
  });

  it('names the first of several keywords that do not replace type', () => {
    expect(checkSchema({ type: 'object', properties: { a: { const: 1, enum: [1] } } })).toEqual({
      detail: 'property "a" has no type ("enum" does not replace it; declare "type" beside it)',
      schemaPath: '$.properties.a',
    });
  });

  it.each([
    ['$ref', { type: 'number', $ref: '#/definitions/n' }],
    ['enum', { type: 'integer', enum: [1, 2] }],
    ['const', { type: 'integer', const: 1 }],
    ['anyOf', { type: ['string', 'number'], anyOf: [{ type: 'string' }, { type: 'number' }] }],
    ['oneOf', { type: ['string', 'number'], oneOf: [{ type: 'string' }, { type: 'number' }] }],
    ['allOf', { type: 'string', allOf: [{ type: 'string' }] }],
    ['type alone', { type: 'string' }],
    ['a list of types', { type: ['string', 'null'] }],
  ])('accepts a property with type beside %s', (_keyword, property) => {
    expect(checkSchema({ type: 'object', definitions: { n: { type: 'number' } }, properties: { a: property } })).toBeNull();
  });

  it('refuses an untyped property without naming a stand-in when it has none', () => {
    expect(checkSchema({ type: 'object', properties: { a: { description: 'x', minimum: 1 } } })).toEqual({
      detail: 'property "a" has no type',
      schemaPath: '$.properties.a',
    });
  });

  it('accepts boolean subschemas and refuses other non-objects where a schema belongs', () => {
    expect(checkSchema({ type: 'object', properties: { a: true, b: false }, additionalProperties: false })).toBeNull();
    expect(checkSchema({ type: 'object', properties: { a: 5 } })).toEqual({
      detail: 'a subschema must be an object or a boolean',
      schemaPath: '$.properties.a',
    });
    expect(checkSchema({ type: 'object', not: null })).toEqual({
      detail: 'a subschema must be an object or a boolean',
      schemaPath: '$.not',
    });
  });

  it('reports the first unknown keyword of a node at its own path', () => {
    expect(checkSchema({ type: 'object', bogus: 1, properties: { a: { description: 'untyped' } } })).toEqual(unknown('bogus', '$.bogus'));
  });

  it.each([
    [
      'a self-reference',
      { type: 'object', properties: { a: { type: 'object', $ref: '#' } } },
      '$.properties.a.$ref',
      '$ref "#" refers to the whole schema, which is circular',
    ],
    [
      'a definition that refers to itself',
      { type: 'object', definitions: { n: { $ref: '#/definitions/n' } } },
      '$.definitions.n.$ref',
      'circular $ref: #/definitions/n refers back to a schema that contains it',
    ],
    [
      'two definitions referring to each other',
      { type: 'object', definitions: { a: { $ref: '#/definitions/b' }, b: { $ref: '#/definitions/a' } } },
      '$.definitions.a.$ref',
      'circular $ref: #/definitions/b refers back to a schema that contains it',
    ],
    [
      'a 2020-12 $defs cycle through items',
      { $schema: DRAFT_2020, type: 'object', $defs: { list: { type: 'array', items: { $ref: '#/$defs/list' } } } },
      '$.$defs.list.items.$ref',
      'circular $ref: #/$defs/list refers back to a schema that contains it',
    ],
  ])('refuses %s as circular', (_name, schema, schemaPath, detail) => {
    expect(checkSchema(schema)).toEqual({ detail, schemaPath });
  });

  it('accepts shared and chained non-circular refs, escaped pointers and $ref-like data', () => {
    expect(
      checkSchema({
        type: 'object',
        definitions: { n: { type: 'number' }, m: { $ref: '#/definitions/n' }, l: { $ref: '#/definitions/m' }, 'a/b~c': { type: 'string' } },
        properties: {
          x: { type: 'number', $ref: '#/definitions/n' },
          y: { type: 'number', $ref: '#/definitions/m' },
          z: { type: 'string', $ref: '#/definitions/a~1b~0c' },
        },
      }),
    ).toBeNull();
    expect(
      checkSchema({
        type: 'object',
        properties: {
          a: { type: 'object', const: { $ref: '#' } },
          b: { type: 'object', enum: [{ $ref: '#' }] },
          c: { type: 'object', default: { $ref: '#' }, examples: [{ $ref: '#' }] },
        },
      }),
    ).toBeNull();
  });

  it('reports where ajv finds a malformed keyword value', () => {
    expect(checkSchema({ type: 'object', properties: { 'a/b': { type: 'number', minimum: 'x' } } })).toEqual({
      detail: expect.stringMatching(/^schema is not valid draft-07: \/properties\/a~1b\/minimum /),
      schemaPath: "$.properties['a/b'].minimum",
    });
    expect(checkSchema({ type: 'object', properties: { a: { type: 'string' } }, required: [1] })).toEqual({
      detail: expect.stringMatching(/^schema is not valid draft-07: \/required\/0 /),
      schemaPath: '$.required[0]',
    });
    expect(checkSchema({ $schema: DRAFT_2020, type: 'object', properties: { a: { type: 'number', minimum: 'x' } } })).toEqual({
      detail: expect.stringMatching(/^schema is not valid 2020-12: \/properties\/a\/minimum /),
      schemaPath: '$.properties.a.minimum',
    });
  });

  it('refuses a schema ajv will not compile in strict mode, and compiles the same schema again afterwards', () => {
    const bad = { type: 'object', properties: { a: { type: 'string', minimum: 1 } } };
    expect(checkSchema(bad)).toEqual({ detail: expect.stringMatching(/^schema does not compile: strict mode/), schemaPath: '$' });
    const withId = { $id: 'https://example.com/s.json', ...base };
    expect(checkSchema(withId)).toBeNull();
    expect(checkSchema(withId)).toBeNull();
  });
});

describe('JSONPath of refusals', () => {
  it.each([
    [['1a'], "$['1a']"],
    [['a1'], '$.a1'],
    [['$x', '_y'], '$.$x._y'],
    [["it's"], "$['it\\'s']"],
    [['a', 0, 'b'], '$.a[0].b'],
  ])('writes %j as %s', (segments, path) => {
    expect(jsonPath(segments)).toBe(path);
  });

  it.each([
    ['1a', "$.properties['1a'].minimum"],
    ['a1', '$.properties.a1.minimum'],
  ])('keeps the property name %s of an ajv error as a name, not an index', (name, schemaPath) => {
    expect(checkSchema({ type: 'object', properties: { [name]: { type: 'number', minimum: 'x' } } })).toEqual({
      detail: `schema is not valid draft-07: /properties/${name}/minimum must be number`,
      schemaPath,
    });
  });
});

describe('schema checker: remaining walk and ref rules', () => {
  it('refuses an array where a single schema belongs (only items may be a tuple)', () => {
    expect(sub({ not: [{}] })).toEqual({ detail: 'a subschema must be an object or a boolean', schemaPath: '$.not' });
  });

  it('walks every entry of a schema map, not only the first', () => {
    expect(checkSchema({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'string', bogus: 1 } } })).toEqual(
      unknown('bogus', '$.properties.b.bogus'),
    );
  });

  it('resolves refs that sit inside arrays of schemas', () => {
    expect(checkSchema({ type: 'object', allOf: [{ $ref: '#/definitions/missing' }] })).toEqual({
      detail: '$ref #/definitions/missing does not resolve',
      schemaPath: '$.allOf[0].$ref',
    });
  });

  it('refuses a cycle reached through a property that is not itself part of it', () => {
    expect(
      checkSchema({
        type: 'object',
        properties: { x: { type: 'object', $ref: '#/definitions/a' } },
        definitions: { a: { $ref: '#/definitions/b' }, b: { $ref: '#/definitions/a' } },
      }),
    ).toEqual({ detail: 'circular $ref: #/definitions/b refers back to a schema that contains it', schemaPath: '$.definitions.a.$ref' });
  });

  it('unescapes ~0 and keeps multi-digit indexes in ajv error paths', () => {
    expect(checkSchema({ type: 'object', properties: { 'a~b': { type: 'number', minimum: 'x' } } })).toEqual({
      detail: 'schema is not valid draft-07: /properties/a~0b/minimum must be number',
      schemaPath: "$.properties['a~b'].minimum",
    });
    const required = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 1];
    expect(checkSchema({ type: 'object', properties: { a: { type: 'string' } }, required })).toEqual({
      detail: 'schema is not valid draft-07: /required/10 must be string',
      schemaPath: '$.required[10]',
    });
  });
});

describe('validatorFor drafts', () => {
  it('reads the https spelling of draft-07 as draft-07 (ajv knows only the http one)', () => {
    const validate = validatorFor({ $schema: 'https://json-schema.org/draft-07/schema#', type: 'object', required: ['a'] });
    expect(validate({})).toEqual({ valid: false, errors: ["(root) must have required property 'a'"] });
  });

  it('validates a draft-07 tuple with draft-07 semantics, reporting all errors', () => {
    const validate = validatorFor({ type: 'array', items: [{ type: 'string' }, { type: 'string' }] });
    expect(validate(['a', 'b'])).toEqual({ valid: true, errors: [] });
    expect(validate([1, 2])).toEqual({ valid: false, errors: ['/0 must be string', '/1 must be string'] });
  });

  it('reports all errors in 2020-12 mode', () => {
    const validate = validatorFor({
      $schema: DRAFT_2020,
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'string' } },
    });
    expect(validate({ a: 1, b: 2 })).toEqual({ valid: false, errors: ['/a must be string', '/b must be string'] });
  });
});

describe('validatorFor', () => {
  it('validates 2020-12 data with 2020-12 semantics and checks formats', () => {
    const validate = validatorFor({
      $schema: DRAFT_2020,
      type: 'object',
      properties: {
        pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] },
        mail: { type: 'string', format: 'email' },
      },
    });
    expect(validate({ pair: ['a', 1], mail: 'a@example.com' })).toEqual({ valid: true, errors: [] });
    expect(validate({ pair: ['a', 'b'] })).toEqual({ valid: false, errors: ['/pair/1 must be number'] });
    expect(validate({ mail: 'not-an-email' })).toEqual({ valid: false, errors: ['/mail must match format "email"'] });
  });

  it('validates draft-07 data, naming the root as (root)', () => {
    const validate = validatorFor({ type: 'object', required: ['a'] });
    expect(validate({})).toEqual({ valid: false, errors: ["(root) must have required property 'a'"] });
  });
});
