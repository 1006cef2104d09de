import fc from 'fast-check';
import { goodPackageCapabilities } from '../support/provider-runtime';
import {
  Deep,
  HOSTILE_HEADER_VALUES,
  HOSTILE_NUMBERS,
  HOSTILE_STRINGS,
  HUGE_STRINGS,
  ID_KINDS,
  Many,
  OMIT,
  RAW_BODIES,
  RAW_SEGMENTS,
  LONE_SURROGATE,
  Ref,
  RefKind,
  Repeat,
} from './values';

/** The parts of an OpenAPI 3 document the fuzz reads. */
export interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  nullable?: boolean;
  allOf?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  additionalProperties?: boolean | Schema;
  example?: unknown;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
  $ref?: string;
}

interface RawOperation {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }>; required?: boolean };
  responses?: Record<string, unknown>;
  security?: unknown[];
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, RawOperation>>;
  components?: { schemas?: Record<string, Schema>; parameters?: Record<string, Parameter> };
  security?: unknown[];
}

export type CredentialKind =
  'none' | 'user' | 'developer' | 'app' | 'operator' | 'logoutUser' | 'soulUser' | 'logoutDeveloper' | 'sessionsUser' | 'accountUser';

export interface Operation {
  /** `POST /v1/contacts/{id}` */
  key: string;
  method: string;
  path: string;
  pathParams: Array<{ name: string; schema: Schema }>;
  queryParams: Array<{ name: string; required: boolean; schema: Schema }>;
  headerParams: Array<{ name: string; required: boolean; schema: Schema }>;
  body?: Schema;
  /** Response status keys as documented (`200`, `4XX`, `default`). */
  responses: string[];
  secured: boolean;
}

export interface FuzzCase {
  /** `own`: the credential the route is for; anything else sends another kind's, none or garbage. */
  credential: 'own' | 'none' | 'garbage' | CredentialKind;
  path: Record<string, unknown>;
  query: Array<[string, unknown]>;
  headers: Record<string, unknown>;
  body: unknown;
  /** Inbound provider webhooks only: how X-Signature-256 is made. */
  signature: 'valid' | 'none' | 'wrong' | 'malformed';
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

function deref<T extends { $ref?: string }>(document: OpenApiDocument, value: T | undefined, seen = 0): T | undefined {
  if (!value?.$ref || seen > 20) return value;
  const parts = value.$ref.replace(/^#\//, '').split('/');
  let target: unknown = document;
  for (const part of parts) target = (target as Record<string, unknown> | undefined)?.[part];
  return deref(document, target as T, seen + 1);
}

/** Every HTTP operation of the document, with `$ref`s of parameters and bodies resolved one level (schemas resolve lazily). */
export function operationsOf(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const raw = item[method];
      if (!raw) continue;
      const parameters = (raw.parameters ?? []).map((p) => deref(document, p)!).filter(Boolean);
      const unique = (list: Parameter[]) =>
        list.filter((p, i) => list.findIndex((q) => q.name.toLowerCase() === p.name.toLowerCase()) === i);
      const content = raw.requestBody?.content ?? {};
      const json = content['application/json'] ?? Object.values(content)[0];
      operations.push({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParams: unique(parameters.filter((p) => p.in === 'path')).map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        queryParams: unique(parameters.filter((p) => p.in === 'query')).map((p) => ({
          name: p.name,
          required: !!p.required,
          schema: p.schema ?? {},
        })),
        // The first of two spellings of one header wins, as it would in a server that lower-cases names.
        headerParams: unique(parameters.filter((p) => p.in === 'header'))
          .filter((p) => !['authorization', 'content-type'].includes(p.name.toLowerCase()))
          .map((p) => ({ name: p.name.toLowerCase(), required: !!p.required, schema: p.schema ?? {} })),
        body: json?.schema,
        responses: Object.keys(raw.responses ?? {}),
        secured: (raw.security ?? document.security ?? []).length > 0,
      });
    }
  }
  return operations;
}

/** Whether `status` is among the documented response keys (exact, `4XX` range or `default`). */
export function isDocumented(responses: string[], status: number): boolean {
  return responses.some((key) => key === String(status) || key.toUpperCase() === `${Math.floor(status / 100)}XX` || key === 'default');
}

export function documentsClientErrors(responses: string[]): boolean {
  return responses.some((key) => /^4/.test(key));
}

/** Valid values for fields the document cannot describe well enough on its own (ids, secrets, reachable URLs). */
const FIELD_HINTS: Record<string, fc.Arbitrary<unknown>> = {
  email: fc.integer({ min: 0, max: 1e6 }).map((n) => `fuzz${n}@example.com`),
  recipient_id: fc.constantFrom(new Ref('contact'), new Ref('group')),
  with: fc.constantFrom(new Ref('contact'), new Ref('group')),
  contact_id: fc.constant(new Ref('contact')),
  member_ids: fc.constant([new Ref('contact')]),
  package_id: fc.constant(new Ref('package')),
  packageId: fc.constant(new Ref('package')),
  installId: fc.constant(new Ref('install')),
  install_id: fc.constant(new Ref('install')),
  userId: fc.constant(new Ref('user')),
  appId: fc.constant(new Ref('app')),
  app_id: fc.constant(new Ref('app')),
  version_id: fc.constant(new Ref('version')),
  client_id: fc.constant(new Ref('clientId')),
  client_secret: fc.constant(new Ref('clientSecret')),
  redirect_uri: fc.constant(new Ref('redirectUri')),
  redirect_uris: fc.constant([new Ref('redirectUri')]),
  url: fc.constant(new Ref('webhookUrl')),
  webhook_url: fc.constant(new Ref('webhookUrl')),
  runtimeUrl: fc.constant(new Ref('runtimeUrl')),
  password: fc.constantFrom('correct horse battery staple', 'another long passphrase 42'),
  slug: fc.integer({ min: 0, max: 1e9 }).map((n) => `fuzz-pkg-${n}`),
  since: fc.constant(new Ref('now')),
  timestamp: fc.constant(new Ref('now')),
  firebase_token: fc.constant(new Ref('firebaseToken')),
  code_challenge: fc.constant('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'),
  q: fc.constantFrom('bank', 'fuzz', 'a'),
  capabilities: fc.constant(goodPackageCapabilities()),
  version: fc.integer({ min: 1, max: 1e6 }).map((n) => `1.${n}.0`),
  scope: fc.constantFrom('capabilities:execute', 'capabilities:execute installs:read'),
};

/** Valid bodies for operations whose document gives no request schema (or too little to pass validation), merged under the schema. */
export const BASE_BODIES: Record<string, Record<string, unknown>> = {
  'POST /v1/auth/token': {
    grant_type: 'client_credentials',
    client_id: new Ref('clientId'),
    client_secret: new Ref('clientSecret'),
    scope: 'packages:read',
  },
  'POST /v1/providers/runtime/webhook': {
    event: 'meeting.updated',
    action: 'moved',
    timestamp: new Ref('now'),
    userId: new Ref('user'),
    data: { meetingId: 'mtg_1', startsAt: '2026-02-01T10:00:00Z' },
  },
  'POST /v1/agents/execute': { action: 'suggest_reply', params: { contact_id: new Ref('contact') } },
  'POST /v1/providers/packages/{package_id}/capabilities/{capability_name}/execute': { params: { account: 'checking' } },
  'POST /v1/operator/packages/{package_id}/suspend': {
    reason: 'policy_violation',
    message: 'Fuzz suspension',
    remediation: 'Nothing to do',
  },
  'POST /v1/providers/apps': {
    name: 'Fuzz App',
    description: 'Fuzzed',
    redirect_uris: [new Ref('redirectUri')],
    webhook_url: new Ref('webhookUrl'),
  },
};

/** Path parameter name → the kind of id it takes (`id` depends on the collection). */
function pathRef(operation: Operation, name: string): RefKind {
  const byName: Record<string, RefKind> = {
    app_id: 'app',
    package_id: 'package',
    version_id: 'version',
    install_id: 'install',
    delivery_id: 'delivery',
    conf_id: 'conf',
    confirmation_id: 'confirmation',
    export_id: 'export',
    slug: 'slug',
    capability_name: 'capability',
    placement: 'placement',
    user_id: 'victimUser',
  };
  if (byName[name]) return byName[name];
  if (operation.path.includes('/groups/')) return 'group';
  if (operation.path.includes('/agents/actions/')) return 'action';
  return 'contact';
}

export class ArbitraryBuilder {
  constructor(
    private readonly document: OpenApiDocument,
    private readonly baseBodies: Record<string, Record<string, unknown>> = BASE_BODIES,
  ) {}

  private schema(schema: Schema | undefined): Schema {
    const resolved = deref(this.document, schema) ?? {};
    if (resolved.allOf?.length) {
      const parts = resolved.allOf.map((part) => this.schema(part));
      return {
        ...resolved,
        allOf: undefined,
        type: parts.find((p) => p.type)?.type ?? resolved.type,
        properties: Object.assign({}, ...parts.map((p) => p.properties ?? {}), resolved.properties ?? {}),
        required: [...new Set(parts.flatMap((p) => p.required ?? []).concat(resolved.required ?? []))],
      };
    }
    return resolved;
  }

  private typeOf(schema: Schema): string | undefined {
    const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
    if (type) return type;
    if (schema.properties) return 'object';
    if (schema.items) return 'array';
    return undefined;
  }

  /** A value the schema accepts (with field-name hints for ids, secrets and reachable URLs). */
  valid(raw: Schema | undefined, name?: string, depth = 0): fc.Arbitrary<unknown> {
    if (name && FIELD_HINTS[name]) return FIELD_HINTS[name];
    const schema = this.schema(raw);
    const variants = schema.oneOf ?? schema.anyOf;
    if (variants?.length) return fc.oneof(...variants.map((v) => this.valid(v, name, depth + 1)));
    if (schema.enum?.length) return fc.constantFrom(...schema.enum);
    switch (this.typeOf(schema)) {
      case 'string': {
        if (schema.format === 'email') return FIELD_HINTS.email;
        if (schema.format === 'date-time') return fc.constant(new Ref('now'));
        if (schema.format === 'uri' || schema.format === 'url') return fc.constant(new Ref('webhookUrl'));
        const minLength = Math.max(1, schema.minLength ?? 1);
        const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? 24, minLength + 24));
        const text = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'), minLength, maxLength });
        return typeof schema.example === 'string' ? fc.oneof(fc.constant(schema.example), text) : text;
      }
      case 'integer':
      case 'number': {
        const min = schema.minimum ?? 0;
        const max = schema.maximum ?? Math.max(min + 100, 100);
        if (schema.type === 'integer' || max - min > 2) return fc.integer({ min: Math.ceil(min), max: Math.floor(max) });
        return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
      }
      case 'boolean':
        return fc.boolean();
      case 'array': {
        const minLength = schema.minItems ?? 0;
        const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? 3, 3));
        if (depth > 3) return fc.constant([]);
        return fc.array(this.valid(schema.items, undefined, depth + 1), { minLength, maxLength });
      }
      case 'object':
        if (depth > 3) return fc.constant({});
        return this.validObject(schema, depth, undefined);
      default:
        return fc.constantFrom('fuzz', 1, true);
    }
  }

  private fields(schema: Schema, base: Record<string, unknown> | undefined): Array<{ name: string; schema: Schema; required: boolean }> {
    const names = new Set([...Object.keys(schema.properties ?? {}), ...Object.keys(base ?? {})]);
    return [...names].map((name) => ({
      name,
      schema: schema.properties?.[name] ?? {},
      required: (schema.required ?? []).includes(name) || (base !== undefined && name in base),
    }));
  }

  private validField(field: { name: string; schema: Schema }, base: Record<string, unknown> | undefined, depth: number) {
    if (base && field.name in base) return fc.constant(base[field.name]);
    return this.valid(field.schema, field.name, depth + 1);
  }

  private validObject(schema: Schema, depth: number, base: Record<string, unknown> | undefined): fc.Arbitrary<Record<string, unknown>> {
    const record: Record<string, fc.Arbitrary<unknown>> = {};
    for (const field of this.fields(schema, base)) {
      const value = this.validField(field, base, depth);
      record[field.name] = field.required ? value : fc.oneof({ weight: 3, arbitrary: value }, { weight: 1, arbitrary: fc.constant(OMIT) });
    }
    return fc.record(record);
  }

  /** Values of a wrong type, shape, size or encoding for the schema, and the generic hostile ones. */
  hostile(raw: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
    const schema = this.schema(raw);
    const generic = fc.oneof(
      fc.constant(null),
      fc.constant(OMIT),
      fc.constantFrom(true, false, 0, -1, 1e40, 'x', [], {}),
      fc.constantFrom(...HOSTILE_STRINGS),
      fc.constantFrom(new Deep('array', 64), new Deep('object', 64), new Deep('array', 3000), new Deep('object', 3000)),
      fc.constant(JSON.parse('{"__proto__":{"polluted":true}}') as unknown),
    );
    const strings = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
      { weight: 1, arbitrary: fc.constantFrom(...HUGE_STRINGS) },
      { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
      { weight: 1, arbitrary: fc.constantFrom(42, true, ['x'], { x: 1 }) },
    );
    let typed: fc.Arbitrary<unknown>;
    switch (this.typeOf(schema)) {
      case 'string':
        typed = strings;
        break;
      case 'integer':
      case 'number':
        typed = fc.constantFrom(...HOSTILE_NUMBERS);
        break;
      case 'boolean':
        typed = fc.constantFrom('true', 1, 'yes', 0);
        break;
      case 'array': {
        const item = depth < 2 ? this.hostile(schema.items, depth + 1) : strings;
        typed = fc.oneof(
          fc.constantFrom({}, 'x', [null], [[]], new Many('x', 10_000), new Deep('array', 200)),
          fc.tuple(this.valid(schema.items, undefined, depth + 1), item).map(([good, bad]) => [good, bad]),
        );
        break;
      }
      case 'object':
        typed =
          depth < 2 && schema.properties
            ? fc.oneof(fc.constantFrom([], 'x', 42, [{}]), this.mutatedObject(schema, depth + 1, undefined))
            : fc.constantFrom([], 'x', 42, [{}], new Deep('object', 200));
        break;
      default:
        typed = strings;
    }
    return fc.oneof({ weight: 3, arbitrary: typed }, { weight: 1, arbitrary: generic });
  }

  /** An object that is valid except for one field, or several, or an extra unknown one. */
  private mutatedObject(schema: Schema, depth: number, base: Record<string, unknown> | undefined): fc.Arbitrary<unknown> {
    const fields = this.fields(schema, base);
    const valid = this.validObject(schema, depth, base);
    if (fields.length === 0) return fc.tuple(valid, this.hostile(undefined, depth)).map(([v, bad]) => ({ ...v, unknown_field: bad }));
    const oneField = fc.oneof(
      ...fields.map((field) =>
        fc.tuple(valid, this.hostile(field.schema, depth)).map(([v, bad]) => Object.assign({}, v, { [field.name]: bad })),
      ),
    );
    const manyFields = fc.record(
      Object.fromEntries(
        fields.map((field) => [
          field.name,
          fc.oneof(
            { weight: 2, arbitrary: this.validField(field, base, depth) },
            { weight: 2, arbitrary: this.hostile(field.schema, depth) },
            { weight: 1, arbitrary: fc.constant(OMIT) },
          ),
        ]),
      ),
    );
    const extra = fc
      .tuple(valid, fc.constantFrom('unknown_field', '__proto__', 'constructor', 'id', ''), this.hostile(undefined, depth))
      .map(([v, key, bad]) => {
        const out: Record<string, unknown> = { ...v };
        Object.defineProperty(out, key, { value: bad, enumerable: true, writable: true, configurable: true });
        return out;
      });
    return fc.oneof({ weight: 5, arbitrary: oneField }, { weight: 2, arbitrary: manyFields }, { weight: 1, arbitrary: extra });
  }

  /** The request body: mostly valid-but-one-field, sometimes all valid, sometimes a hostile document. */
  body(operation: Operation): fc.Arbitrary<unknown> {
    const base = this.baseBodies[operation.key];
    const wholeHostile = fc.oneof(
      fc.constantFrom(OMIT, null, [], 'text', 42, true, new Deep('array', 5000), new Deep('object', 5000), new Many({}, 10_000)),
      fc.constantFrom(...RAW_BODIES),
    );
    if (!operation.body && !base) {
      // No body documented: none, mostly; junk sometimes (it must be ignored or refused, never crash).
      return fc.oneof(
        { weight: 4, arbitrary: fc.constant(OMIT) },
        { weight: 1, arbitrary: fc.constant({}) },
        { weight: 1, arbitrary: wholeHostile },
      );
    }
    const schema: Schema = operation.body ? this.schema(operation.body) : { type: 'object' };
    if (this.typeOf(schema) !== 'object' && !base) {
      return fc.oneof(
        { weight: 3, arbitrary: this.valid(schema) },
        { weight: 3, arbitrary: this.hostile(schema) },
        { weight: 1, arbitrary: wholeHostile },
      );
    }
    return fc.oneof(
      { weight: 2, arbitrary: this.validObject(schema, 0, base) },
      { weight: 6, arbitrary: this.mutatedObject(schema, 0, base) },
      { weight: 1, arbitrary: wholeHostile },
    );
  }

  private pathParam(operation: Operation, name: string): fc.Arbitrary<unknown> {
    const own = new Ref(pathRef(operation, name));
    return fc.oneof(
      { weight: 5, arbitrary: fc.constant(own) },
      { weight: 1, arbitrary: fc.constantFrom(...ID_KINDS).map((kind) => new Ref(kind)) },
      {
        weight: 2,
        arbitrary: fc.constantFrom(
          ...HOSTILE_STRINGS.filter((s) => s !== '' && s.length < 400),
          new Repeat('x', 101),
          new Repeat('a', 2000),
          new Repeat('é', 120),
        ),
      },
      { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 16 }) },
    );
  }

  private validQueryValue(name: string, schema: Schema): fc.Arbitrary<unknown> {
    // No valid cursor exists before a first page: its valid value is none.
    if (name === 'cursor') return fc.constant(OMIT);
    if (name === 'full') return fc.constantFrom('true', 'false');
    return FIELD_HINTS[name] ?? this.valid(schema, name);
  }

  private hostileQueryValue(name: string, schema: Schema): fc.Arbitrary<unknown> {
    const valid = this.validQueryValue(name, schema);
    return fc.oneof(
      {
        weight: 4,
        arbitrary: fc.constantFrom(...HOSTILE_NUMBERS, ...HOSTILE_STRINGS.filter((s) => s.length < 400), new Repeat('9', 1000)),
      },
      { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS) },
      // A repeated key (`?offset=1&offset=2`) arrives as an array.
      { weight: 1, arbitrary: fc.tuple(valid, valid).map(([a, b]) => [a, b]) },
      { weight: 1, arbitrary: fc.constantFrom(new Repeat('x', 4000), new Ref('contact'), new Ref('package'), OMIT) },
    );
  }

  /** Query parameters: all valid, or valid but one, or each one valid, hostile or left out; sometimes an unknown extra. */
  private query(operation: Operation): fc.Arbitrary<Array<[string, unknown]>> {
    const params = operation.queryParams;
    const valid = (param: (typeof params)[number]) =>
      param.required
        ? this.validQueryValue(param.name, param.schema)
        : fc.oneof(this.validQueryValue(param.name, param.schema), fc.constant(OMIT));
    const allValid = fc.tuple(...params.map(valid));
    const modes: Array<fc.WeightedArbitrary<unknown[]>> = [{ weight: 2, arbitrary: allValid }];
    if (params.length > 0) {
      modes.push({
        weight: 5,
        arbitrary: fc.oneof(
          ...params.map((param, i) =>
            fc
              .tuple(allValid, this.hostileQueryValue(param.name, param.schema))
              .map(([values, bad]) => values.map((v, j) => (j === i ? bad : v))),
          ),
        ),
      });
      modes.push({
        weight: 2,
        arbitrary: fc.tuple(
          ...params.map((param) => fc.oneof(valid(param), this.hostileQueryValue(param.name, param.schema), fc.constant(OMIT))),
        ),
      });
    }
    const extra = fc.oneof(
      { weight: 6, arbitrary: fc.constant<Array<[string, unknown]>>([]) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(
            fc.constantFrom('unknown', '__proto__', 'limit', 'offset', 'cursor', ''),
            fc.constantFrom(...HOSTILE_NUMBERS, LONE_SURROGATE),
          )
          .map(([k, v]) => [[k, v] as [string, unknown]]),
      },
    );
    return fc
      .tuple(fc.oneof(...modes), extra)
      .map(([values, more]) => [
        ...values.map((value, i): [string, unknown] => [params[i].name, value]).filter(([, v]) => v !== OMIT),
        ...more,
      ]);
  }

  private headers(operation: Operation): fc.Arbitrary<Record<string, unknown>> {
    const record: Record<string, fc.Arbitrary<unknown>> = {};
    for (const param of operation.headerParams) {
      const valid = fc.uuid();
      record[param.name] = fc.oneof(
        { weight: 4, arbitrary: valid },
        { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_HEADER_VALUES) },
        { weight: param.required ? 1 : 2, arbitrary: fc.constant(OMIT) },
      );
    }
    return fc.record(record);
  }

  /** One request to the operation: credential, path, query, headers and body. */
  fuzzCase(operation: Operation): fc.Arbitrary<FuzzCase> {
    return fc.record({
      credential: fc.oneof(
        { weight: 14, arbitrary: fc.constant<FuzzCase['credential']>('own') },
        {
          weight: 1,
          arbitrary: fc.constantFrom<FuzzCase['credential']>('none', 'garbage', 'user', 'developer', 'app', 'operator', 'soulUser'),
        },
      ),
      path: fc.record(Object.fromEntries(operation.pathParams.map((p) => [p.name, this.pathParam(operation, p.name)]))),
      query: this.query(operation),
      headers: this.headers(operation),
      body: this.body(operation),
      signature: fc.oneof(
        { weight: 8, arbitrary: fc.constant<FuzzCase['signature']>('valid') },
        { weight: 1, arbitrary: fc.constantFrom<FuzzCase['signature']>('none', 'wrong', 'malformed') },
      ),
    });
  }

  /** A fully valid case with fixed values (the start of each known seed). */
  validCase(operation: Operation): FuzzCase {
    const base = this.baseBodies[operation.key];
    const schema: Schema | undefined = operation.body ? this.schema(operation.body) : base ? { type: 'object' } : undefined;
    const body = schema
      ? fc.sample(this.typeOf(schema) === 'object' || base ? this.validObject(schema, 0, base) : this.valid(schema), {
          seed: 1,
          numRuns: 1,
        })[0]
      : OMIT;
    return {
      credential: 'own',
      path: Object.fromEntries(operation.pathParams.map((p) => [p.name, new Ref(pathRef(operation, p.name))])),
      query: operation.queryParams
        .filter((p) => p.required)
        .map((p) => [p.name, fc.sample(this.validQueryValue(p.name, p.schema), { seed: 1, numRuns: 1 })[0]]),
      headers: Object.fromEntries(operation.headerParams.map((p) => [p.name, 'fuzz-known-seed'])),
      body,
      signature: 'valid',
    };
  }
}
