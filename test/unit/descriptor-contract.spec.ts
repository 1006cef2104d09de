import {
  CAPABILITY_MODES,
  COMPONENTS,
  DEFAULT_HEARTBEAT_INTERVAL_SECONDS,
  DEFAULT_REFRESH_INTERVAL_SECONDS,
  DEFAULT_SURFACE_GUIDANCE,
  DESCRIPTOR_SCHEMA,
  DESCRIPTOR_SCHEMA_URL_PATH,
  descriptorErrors,
  INTENTS,
  MAX_REPORTED_ERRORS,
  PLACEMENTS,
  RISK_TIERS,
  TYPICAL_COMPONENTS,
} from '@soul-service/rules';
import { refuseErrors } from '../../src/modules/descriptors/descriptor-contract';
import { ProblemError } from '../../src/common/errors/problem-error';
import { CreatePackageDto, CreateVersionDto, ValidateDraftDto } from '../../src/modules/packages/dto/package.dto';
import { goodPackageCapabilities } from '../support/provider-runtime';

/** Where @nestjs/swagger lists a class's documented properties (its DECORATORS.API_MODEL_PROPERTIES_ARRAY). */
const SWAGGER_PROPERTIES = 'swagger/apiModelPropertiesArray';
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the schema document, read loosely
const schema = DESCRIPTOR_SCHEMA as unknown as Json;
const defs = schema.$defs as Json;
const pkg = (capabilities: unknown[], extra: Json = {}) => ({
  appId: 'app_1',
  name: 'Acme',
  slug: 'acme',
  description: 'Acme',
  riskTier: 'data_only',
  capabilities,
  ...extra,
});
const state = { type: 'state', schema: { type: 'object', properties: { a: { type: 'string' } } } };

describe('the descriptor contract (package-descriptor.schema.json)', () => {
  it('is published under its own path', () => {
    expect(schema.$id).toBe(DESCRIPTOR_SCHEMA_URL_PATH);
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
  });

  it('holds the vocabulary and defaults the code uses', () => {
    expect(defs.capability.properties.type.enum).toEqual([...CAPABILITY_MODES]);
    expect(defs.package.properties.riskTier.enum).toEqual([...RISK_TIERS]);
    expect(defs.surfaceGuidance.properties.intent.enum).toEqual([...INTENTS]);
    expect(defs.surfaceGuidance.properties.placement.items.enum).toEqual([...PLACEMENTS]);
    expect(defs.surfaceGuidance.properties.preferredComponents.items.enum).toEqual([...COMPONENTS]);
    expect(defs.surfaceGuidance.properties.components.items.enum).toEqual([...COMPONENTS]);
    expect(defs.stateCapability.properties.refreshInterval.default).toBe(DEFAULT_REFRESH_INTERVAL_SECONDS);
    expect(defs.realtimeCapability.properties.heartbeatInterval.default).toBe(DEFAULT_HEARTBEAT_INTERVAL_SECONDS);
    for (const mode of CAPABILITY_MODES) {
      expect(defs[`${mode}Capability`].properties.surfaceGuidance.default).toEqual({
        ...DEFAULT_SURFACE_GUIDANCE[mode],
        preferredComponents: TYPICAL_COMPONENTS[mode],
      });
      expect(defs[`${mode}Capability`].properties.name.default).toBe(mode);
    }
  });

  it('describes every field', () => {
    const undescribed: string[] = [];
    for (const [name, def] of Object.entries(defs)) {
      for (const [field, property] of Object.entries((def.properties ?? {}) as Json)) {
        const target = property.$ref ? defs[String(property.$ref).replace('#/$defs/', '')] : property;
        if (!property.description && !target.description) undescribed.push(`${name}.${field}`);
      }
    }
    expect(undescribed).toEqual([]);
  });

  it('keeps the OpenAPI request bodies to the fields of the schema', () => {
    const documented = (dto: object) =>
      ((Reflect.getMetadata(SWAGGER_PROPERTIES, (dto as { prototype: object }).prototype) ?? []) as string[]).map((p) => p.slice(1)).sort();
    expect(documented(CreatePackageDto)).toEqual(Object.keys(defs.package.properties).sort());
    expect(documented(CreateVersionDto)).toEqual(Object.keys(defs.version.properties).sort());
    expect(documented(ValidateDraftDto)).toEqual(Object.keys(defs.draft.properties).sort());
  });

  it('accepts the complete test package and the short form of each mode', () => {
    expect(descriptorErrors('package', pkg(goodPackageCapabilities()))).toEqual([]);
    expect(
      descriptorErrors(
        'package',
        pkg(CAPABILITY_MODES.map((type) => ({ type, name: `c_${type}`, schema: { id: { type: 'string', required: true } } }))),
      ),
    ).toEqual([]);
    expect(descriptorErrors('version', { version: '2.0.0', capabilities: [state], $schema: 'https://x/descriptor.schema.json' })).toEqual(
      [],
    );
    expect(descriptorErrors('draft', { capabilities: [state] })).toEqual([]);
  });

  it('names the nearest field, the mode a field belongs to, and surface guidance fields put on the capability', () => {
    const errors = descriptorErrors(
      'package',
      pkg([
        { ...state, Schema: {} },
        { type: 'action', schema: state.schema, heartbeatInterval: 5, events: [] },
        { type: 'history', schema: state.schema, intent: 'deep_dive', components: [] },
        { type: 'state', schema: state.schema, colour: 'red' },
      ]),
    );
    expect(errors.map((e) => e.message)).toEqual([
      '`capabilities[0].Schema` is not a known field; did you mean `schema`?',
      '`capabilities[1].heartbeatInterval` is not a field of action capabilities (only of realtime)',
      '`capabilities[1].events` is not a field of action capabilities (only of webhook)',
      '`capabilities[2].intent` is not a known field; did you mean `surfaceGuidance.intent`?',
      '`capabilities[2].components` is not a known field; did you mean `surfaceGuidance.preferredComponents`?',
      expect.stringMatching(/^`capabilities\[3\]\.colour` is not a known field; known fields here: type, name, description, schema/),
    ]);
    expect(errors.every((e) => e.code === 'invalid_format')).toBe(true);
  });

  it('reports the form of schema the provider meant, not both', () => {
    const [full] = descriptorErrors('package', pkg([{ type: 'state', schema: { type: 'array' } }]));
    expect(full).toMatchObject({ code: 'invalid_schema', field: 'capabilities[0].schema', schema_path: '$.type' });
    const short = descriptorErrors('package', pkg([{ type: 'state', schema: { a: { type: 'string', required: 1 }, b: 'x' } }]));
    expect(short.map((e) => [e.field, e.schema_path])).toEqual([
      ['capabilities[0].schema', '$.a.required'],
      ['capabilities[0].schema', '$.b'],
    ]);
    const [notAnObject] = descriptorErrors('package', pkg([{ type: 'state', schema: [] }]));
    expect(notAnObject).toMatchObject({
      code: 'invalid_schema',
      schema_path: '$',
      message: 'capabilities[0].schema: the schema must be an object',
    });
  });

  it('runs the checks a schema cannot state on the parts the contract accepted, once', () => {
    const errors = descriptorErrors(
      'package',
      pkg([
        { ...state, name: 'x', responseSchema: { type: 'object', properties: { n: { minimum: 1 } } } },
        { ...state, name: 'x' },
        {
          type: 'webhook',
          name: 'w',
          schema: state.schema,
          events: [
            { type: 'e', schema: { type: 'object' } },
            { type: 'e', schema: { type: 'object' } },
          ],
        },
        { ...state, name: 'bad name', schema: { type: 'object', properties: { q: {} } } },
      ]),
    );
    expect(errors.map((e) => [e.code, e.field, e.schema_path])).toEqual([
      ['invalid_schema', 'capabilities[0].responseSchema', '$.properties.n'],
      ['invalid_format', 'capabilities[1].name', '$.$defs.name'],
      ['invalid_format', 'capabilities[2].events[1].type', '$.$defs.webhookEventType.properties.type'],
      ['invalid_format', 'capabilities[3].name', '$.$defs.name.pattern'],
      ['invalid_schema', 'capabilities[3].schema', '$.properties.q'],
    ]);
  });

  it('says missing_field for an absent required field, also a missing schema, and refuses nulls as invalid_format', () => {
    const errors = descriptorErrors(
      'package',
      pkg([{ type: 'state' }, { type: 'state', schema: state.schema, name: null }], { name: undefined }),
    );
    expect(errors.map((e) => [e.code, e.field, e.message])).toEqual([
      ['missing_field', 'name', 'name is required'],
      ['missing_field', 'capabilities[0].schema', 'capabilities[0].schema is required'],
      ['invalid_format', 'capabilities[1].name', 'capabilities[1].name must be a string, not null'],
    ]);
  });

  it('names the body itself when it is not an object', () => {
    expect(descriptorErrors('draft', [])).toEqual([
      { code: 'invalid_format', field: '', schema_path: '$.$defs.draft.type', message: 'the body must be an object' },
    ]);
  });

  it('refuses both spellings of the component list at once', () => {
    const [both] = descriptorErrors('package', pkg([{ ...state, surfaceGuidance: { components: [], preferredComponents: [] } }]));
    expect(both).toMatchObject({ field: 'capabilities[0].surfaceGuidance', schema_path: '$.$defs.surfaceGuidance.not' });
    expect(descriptorErrors('package', pkg([{ ...state, surfaceGuidance: { components: ['stat_row'] } }]))).toEqual([]);
  });

  it('quotes field names that are not identifiers, shortens long ones, and caps the list', () => {
    const [odd] = descriptorErrors('package', pkg([{ ...state, 'a b': 1 }]));
    expect(odd.field).toBe('capabilities[0]["a b"]');
    const [long] = descriptorErrors('package', pkg([{ ...state, ['z'.repeat(300)]: 1 }]));
    expect(long.field).toBe(`capabilities[0].${'z'.repeat(64)}…`);
    const many = descriptorErrors('package', pkg(Array.from({ length: 50 }, (_, i) => ({ ...state, name: `n${i}`, p: 1, q: 2, r: 3 }))));
    expect(many).toHaveLength(MAX_REPORTED_ERRORS);
  });

  it('throws one problem with every error, the first one at the top', () => {
    expect(() => refuseErrors([])).not.toThrow();
    const errors = descriptorErrors('package', pkg([{ type: 'state', schema: { type: 'object', properties: { q: {} } } }], { slug: 'A' }));
    let thrown: unknown;
    try {
      refuseErrors(errors);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProblemError);
    const problem = thrown as ProblemError;
    expect(problem.code).toBe('invalid_format');
    expect(problem.detail).toBe(`${errors[0].message} (and 1 more: see errors)`);
    expect(problem.extras).toEqual({
      field: 'slug',
      errors: errors.map(({ field, schema_path, message, code }) => ({ field, schema_path, message, code })),
    });
    let schemaProblem: ProblemError | undefined;
    try {
      refuseErrors(errors.slice(1));
    } catch (error) {
      schemaProblem = error as ProblemError;
    }
    expect(schemaProblem?.extras).toMatchObject({ field: 'capabilities[0].schema', schema_path: '$.properties.q' });
    expect(schemaProblem?.detail).toBe(errors[1].message);
  });
});
