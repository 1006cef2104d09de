/**
 * The package descriptor as a runtime reads it (docs/descriptor.md): the same
 * JSON a provider sends to `POST /v1/providers/packages`, so one file drives
 * both the service and the runtime. Written `as const`, its schemas also give
 * the handlers their parameter and result types (`FromSchema`).
 */
export type CapabilityMode = 'state' | 'action' | 'history' | 'realtime' | 'webhook';

export type JsonSchema = Readonly<Record<string, unknown>>;

export interface CapabilityDescriptor {
  readonly type: CapabilityMode;
  readonly name?: string;
  readonly description?: string;
  /** Full form (`type: "object"`) or short form (a map of field name to `{ type, required, items }`). */
  readonly schema: JsonSchema;
  readonly responseSchema?: JsonSchema;
  readonly refreshInterval?: number;
  readonly heartbeatInterval?: number;
  readonly events?: ReadonlyArray<{ readonly type: string; readonly description?: string; readonly schema: JsonSchema }>;
  readonly examples?: ReadonlyArray<Readonly<Record<string, unknown>>>;
  readonly [other: string]: unknown;
}

export interface PackageDescriptor {
  readonly name?: string;
  readonly slug?: string;
  readonly capabilities: readonly CapabilityDescriptor[];
  readonly [other: string]: unknown;
}

/** A capability with its defaults filled in as the service stores it: a name and a full-form schema. */
export interface ResolvedCapability {
  type: CapabilityMode;
  name: string;
  schema: JsonSchema;
  responseSchema?: JsonSchema;
  refreshInterval: number;
  heartbeatInterval: number;
  events: Array<{ type: string; schema: JsonSchema }>;
  examples: Array<Record<string, unknown>>;
}

const DEFAULT_REFRESH_SECONDS = 300;
const DEFAULT_HEARTBEAT_SECONDS = 30;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The service's rule for reading a schema as short form: no `type` string, `$schema` or `properties` on top, every entry typed. */
function isShortForm(schema: JsonSchema): boolean {
  if (typeof schema.type === 'string' || '$schema' in schema || 'properties' in schema) return false;
  return Object.values(schema).every((entry) => isObject(entry) && typeof entry.type === 'string');
}

/** Expands the short form exactly as the service stores it (docs/descriptor.md, "Short form"). */
export function fullSchema(schema: JsonSchema): JsonSchema {
  if (!isShortForm(schema)) return schema;
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const [name, entry] of Object.entries(schema) as Array<[string, Record<string, unknown>]>) {
    const { required: isRequired, ...rest } = entry;
    properties[name] = rest;
    if (isRequired === true) required.push(name);
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

/**
 * Names and defaults as the service fills them in: an unnamed capability is
 * called after its mode (`state`, then `state_2` …, skipping names taken), so
 * the routes the SDK serves are the ones the service calls.
 */
export function resolveCapabilities(descriptor: PackageDescriptor): ResolvedCapability[] {
  const taken = new Set(descriptor.capabilities.map((c) => c.name).filter((n): n is string => typeof n === 'string'));
  const resolved: ResolvedCapability[] = [];
  for (const capability of descriptor.capabilities) {
    let name = capability.name;
    if (name === undefined) {
      name = capability.type;
      for (let i = 2; taken.has(name); i += 1) name = `${capability.type}_${i}`;
      taken.add(name);
    }
    const schema = fullSchema(capability.schema);
    resolved.push({
      type: capability.type,
      name,
      schema,
      responseSchema: capability.responseSchema,
      refreshInterval: capability.refreshInterval ?? DEFAULT_REFRESH_SECONDS,
      heartbeatInterval: capability.heartbeatInterval ?? DEFAULT_HEARTBEAT_SECONDS,
      events: capability.events?.map((e) => ({ type: e.type, schema: fullSchema(e.schema) })) ?? [{ type: name, schema }],
      examples: (capability.examples ?? []).map((e) => ({ ...e })),
    });
  }
  const names = new Set<string>();
  for (const { name } of resolved) {
    if (names.has(name)) throw new TypeError(`the descriptor names two capabilities ${name}`);
    names.add(name);
  }
  return resolved;
}

// --- types from schemas --------------------------------------------------------

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type ObjectOf<P, R> = Simplify<
  { -readonly [K in keyof P as K extends R ? K : never]: FromSchema<P[K]> } & {
    -readonly [K in keyof P as K extends R ? never : K]?: FromSchema<P[K]>;
  }
>;

type ShortFormOf<S> = Simplify<
  { -readonly [K in keyof S as S[K] extends { required: true } ? K : never]: FromSchema<S[K]> } & {
    -readonly [K in keyof S as S[K] extends { required: true } ? never : K]?: FromSchema<S[K]>;
  }
>;

/**
 * The TypeScript type of a JSON Schema written `as const`: objects with
 * `properties` and `required`, arrays with `items`, `enum`, `const` and the
 * scalar types; short-form maps too. Anything it cannot read is `unknown`,
 * never a wrong type.
 */
export type FromSchema<S> = S extends { readonly const: infer C }
  ? C
  : S extends { readonly enum: ReadonlyArray<infer E> }
    ? E
    : S extends { readonly type: 'string' }
      ? string
      : S extends { readonly type: 'number' | 'integer' }
        ? number
        : S extends { readonly type: 'boolean' }
          ? boolean
          : S extends { readonly type: 'null' }
            ? null
            : S extends { readonly type: 'array'; readonly items: infer I }
              ? Array<FromSchema<I>>
              : S extends { readonly type: 'array' }
                ? unknown[]
                : S extends { readonly type: 'object'; readonly properties: infer P }
                  ? ObjectOf<P, S extends { readonly required: ReadonlyArray<infer R> } ? R : never>
                  : S extends { readonly type: 'object' }
                    ? Record<string, unknown>
                    : S extends { readonly type: unknown }
                      ? unknown
                      : S extends Readonly<Record<string, { readonly type: unknown }>>
                        ? ShortFormOf<S>
                        : unknown;
