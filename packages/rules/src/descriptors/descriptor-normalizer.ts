import { DescriptorError } from '../descriptor-error';
import { isObject } from '../json';
import {
  CAPABILITY_MODES,
  CAPABILITY_NAME_RULE,
  CapabilityDescriptor,
  CapabilityMode,
  Component,
  COMPONENTS,
  DEFAULT_HEARTBEAT_INTERVAL_SECONDS,
  DEFAULT_REFRESH_INTERVAL_SECONDS,
  DEFAULT_SURFACE_GUIDANCE,
  FIELD_FORMATS,
  FieldFormat,
  Intent,
  INTENTS,
  isPathSafeName,
  JsonSchema,
  Placement,
  PLACEMENTS,
  SurfaceField,
  TYPICAL_COMPONENTS,
  WebhookEventType,
} from './capability-descriptor';
import { checkSchema, jsonPath } from './schema-checker';

/** Inbound webhooks carry the type in `event` (at most 200 characters); any visible text without spaces. */
const EVENT_TYPE = /^[\x21-\x7e]{1,200}$/;
const MAX_CAPABILITIES = 50;
const MAX_URL_LENGTH = 2000;

function missing(field: string): never {
  throw new DescriptorError('missing_field', `${field} is required`, { field });
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], field: string): T {
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    throw new DescriptorError('invalid_format', `${field} ${JSON.stringify(value)} is not one of: ${allowed.join(', ')}`, { field });
  }
  return value as T;
}

function positiveInt(value: unknown, field: string, max: number): number {
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > max) {
    throw new DescriptorError('invalid_format', `${field} must be an integer number of seconds from 1 to ${max}`, { field });
  }
  return value as number;
}

/**
 * The short form writes a schema as a map of field → `{ type, required, items }`.
 * It is recognised when the object is not itself a schema (no `type` string at
 * the top) and every entry carries a `type`.
 */
export function isShortForm(schema: Record<string, unknown>): boolean {
  if (typeof schema.type === 'string' || '$schema' in schema || 'properties' in schema) return false;
  const entries = Object.values(schema);
  return entries.length > 0 && entries.every((e) => isObject(e) && typeof e.type === 'string');
}

export function expandShortForm(schema: Record<string, unknown>, field: string): JsonSchema {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const [name, entry] of Object.entries(schema) as Array<[string, Record<string, unknown>]>) {
    const { required: isRequired, ...rest } = entry;
    if (isRequired !== undefined && typeof isRequired !== 'boolean') {
      throw new DescriptorError('invalid_schema', `${field}: "required" of the short-form entry "${name}" must be true or false`, {
        field,
        schema_path: jsonPath([name, 'required']),
      });
    }
    properties[name] = rest;
    if (isRequired === true) required.push(name);
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

function checkedSchema(raw: unknown, field: string): JsonSchema {
  if (raw === undefined) missing(field);
  if (!isObject(raw)) throw new DescriptorError('invalid_schema', `${field} must be a JSON Schema object`, { field, schema_path: '$' });
  const schema = isShortForm(raw) ? expandShortForm(raw, field) : raw;
  const fault = checkSchema(schema);
  if (fault) throw new DescriptorError('invalid_schema', `${field}: ${fault.detail}`, { field, schema_path: fault.schemaPath });
  return schema;
}

/** A list of allowed values; absent means the documented default, an empty list is taken as given. */
function listOf<T extends string>(raw: unknown, allowed: readonly T[], field: string): T[] {
  if (!Array.isArray(raw)) throw new DescriptorError('invalid_format', `${field} must be an array`, { field });
  return [...new Set(raw.map((v, i) => oneOf<T>(v, allowed, `${field}[${i}]`)))];
}

/**
 * Surface guidance, every part optional: the intent and placement default per
 * mode (DEFAULT_SURFACE_GUIDANCE), the components to the ones typical of the mode.
 */
function surfaceGuidance(raw: unknown, field: string, type: CapabilityMode): CapabilityDescriptor['surfaceGuidance'] {
  // Absent means the defaults; null is refused like every other null in a request (docs/decisions.md).
  const guidance = raw === undefined ? {} : raw;
  if (!isObject(guidance)) throw new DescriptorError('invalid_format', `${field} must be an object`, { field });
  const defaults = DEFAULT_SURFACE_GUIDANCE[type];
  const intent = guidance.intent === undefined ? defaults.intent : oneOf<Intent>(guidance.intent, INTENTS, `${field}.intent`);
  const placement =
    guidance.placement === undefined ? [...defaults.placement] : listOf<Placement>(guidance.placement, PLACEMENTS, `${field}.placement`);
  // Both spellings occur in the spec; the list lives in `preferredComponents`. The descriptor contract
  // (descriptor-contract.ts) refuses both at once; a caller without it gets `preferredComponents`.
  const key = guidance.preferredComponents !== undefined ? 'preferredComponents' : 'components';
  const preferredComponents =
    guidance[key] === undefined ? [...TYPICAL_COMPONENTS[type]] : listOf<Component>(guidance[key], COMPONENTS, `${field}.${key}`);
  return { intent, placement, preferredComponents, ...surfacePresentation(guidance, field) };
}

/** The optional widget title and field presentation of surface guidance (docs/components.md); kept only when given. */
function surfacePresentation(
  guidance: Record<string, unknown>,
  field: string,
): Pick<CapabilityDescriptor['surfaceGuidance'], 'title' | 'fields'> {
  const text = (value: unknown, at: string, max: number): string => {
    if (typeof value !== 'string' || value.length < 1 || value.length > max)
      throw new DescriptorError('invalid_format', `${at} must be a string of 1 to ${max} characters`, { field: at });
    return value;
  };
  const out: Pick<CapabilityDescriptor['surfaceGuidance'], 'title' | 'fields'> = {};
  if (guidance.title !== undefined) out.title = text(guidance.title, `${field}.title`, 80);
  if (guidance.fields !== undefined) {
    if (!isObject(guidance.fields))
      throw new DescriptorError('invalid_format', `${field}.fields must be an object`, { field: `${field}.fields` });
    const entries = Object.entries(guidance.fields);
    if (entries.length > 50)
      throw new DescriptorError('invalid_format', `${field}.fields names at most 50 fields`, { field: `${field}.fields` });
    out.fields = Object.fromEntries(
      entries.map(([name, raw]) => {
        const at = `${field}.fields.${name}`;
        text(name, `${field}.fields (a field name)`, 100);
        if (!isObject(raw)) throw new DescriptorError('invalid_format', `${at} must be an object`, { field: at });
        const spec: SurfaceField = {};
        if (raw.label !== undefined) spec.label = text(raw.label, `${at}.label`, 80);
        if (raw.unit !== undefined) spec.unit = text(raw.unit, `${at}.unit`, 16);
        if (raw.format !== undefined) spec.format = oneOf<FieldFormat>(raw.format, FIELD_FORMATS, `${at}.format`);
        if (raw.hidden !== undefined) {
          if (typeof raw.hidden !== 'boolean') throw new DescriptorError('invalid_format', `${at}.hidden must be a boolean`, { field: at });
          spec.hidden = raw.hidden;
        }
        return [name, spec];
      }),
    );
  }
  return out;
}

function eventType(entry: Record<string, unknown>, at: string): string {
  if (entry.type === undefined) missing(`${at}.type`);
  if (typeof entry.type !== 'string' || !EVENT_TYPE.test(entry.type)) {
    throw new DescriptorError(
      'invalid_format',
      `${at}.type must be 1 to 200 visible characters without spaces (inbound webhooks name it in "event"), such as "meeting.updated"`,
      { field: `${at}.type` },
    );
  }
  return entry.type;
}

/**
 * Event types of a `webhook` capability. Without `events`, the capability
 * registers one event type: its own name, with its `schema` for `data`.
 */
function webhookEvents(raw: unknown, field: string, capability: CapabilityDescriptor): WebhookEventType[] {
  if (raw === undefined) return [{ type: capability.name, description: capability.description, schema: capability.schema }];
  if (!Array.isArray(raw) || raw.length === 0)
    throw new DescriptorError('invalid_format', `${field} must list at least one event type`, { field });
  const seen = new Set<string>();
  return raw.map((entry, i) => {
    const at = `${field}[${i}]`;
    if (!isObject(entry)) throw new DescriptorError('invalid_format', `${at} must be an object with type and schema`, { field: at });
    const type = eventType(entry, at);
    if (seen.has(type)) throw new DescriptorError('invalid_format', `${at}.type ${type} is registered twice`, { field: `${at}.type` });
    seen.add(type);
    if (entry.description !== undefined && typeof entry.description !== 'string')
      throw new DescriptorError('invalid_format', `${at}.description must be a string`, { field: `${at}.description` });
    return { type, description: entry.description ?? '', schema: checkedSchema(entry.schema, `${at}.schema`) };
  });
}

/**
 * Names of the capabilities: the given ones (checked against the one rule the
 * runtime path needs), and for a capability without one, its mode (`state`),
 * then `state_2`, `state_3` … skipping names already taken.
 */
function capabilityNames(entries: Array<Record<string, unknown>>): string[] {
  const given = new Map<string, number>();
  entries.forEach((entry, i) => {
    if (entry.name === undefined) return;
    const field = `capabilities[${i}].name`;
    if (typeof entry.name !== 'string' || !isPathSafeName(entry.name))
      throw new DescriptorError('invalid_format', `${field} ${CAPABILITY_NAME_RULE}`, { field });
    if (given.has(entry.name))
      throw new DescriptorError(
        'invalid_format',
        `${field} ${entry.name} is used by two capabilities (capabilities[${given.get(entry.name)}])`,
        {
          field,
        },
      );
    given.set(entry.name, i);
  });
  const taken = new Set(given.keys());
  return entries.map((entry) => {
    if (typeof entry.name === 'string') return entry.name;
    const base = String(entry.type);
    let name = base;
    for (let n = 2; taken.has(name); n += 1) name = `${base}_${n}`;
    taken.add(name);
    return name;
  });
}

function interval(value: unknown, fallback: number, field: string, max: number): number {
  return value === undefined ? fallback : positiveInt(value, field, max);
}

/**
 * Validates capability descriptors (full or short form) and normalises them to
 * the one stored form, with every optional field at its documented default.
 * Only `type` and `schema` are required. Errors name the offending field, e.g.
 * `capabilities[1].surfaceGuidance.intent`; names of fields are case-sensitive.
 * A `runtimeUrl` is kept as given (a string); the caller checks and resolves it.
 */
export function normaliseCapabilities(raw: unknown): CapabilityDescriptor[] {
  if (raw === undefined) missing('capabilities');
  if (!Array.isArray(raw) || raw.length === 0)
    throw new DescriptorError('invalid_format', 'capabilities must be an array with at least one capability descriptor', {
      field: 'capabilities',
    });
  if (raw.length > MAX_CAPABILITIES)
    throw new DescriptorError('invalid_format', `at most ${MAX_CAPABILITIES} capabilities per version`, { field: 'capabilities' });
  const entries = raw.map((entry, i) => {
    const at = `capabilities[${i}]`;
    if (!isObject(entry)) throw new DescriptorError('invalid_format', `${at} must be an object`, { field: at });
    if (entry.type === undefined) missing(`${at}.type`);
    oneOf<CapabilityMode>(entry.type, CAPABILITY_MODES, `${at}.type`);
    return entry;
  });
  const names = capabilityNames(entries);
  return entries.map((entry, i) => {
    const at = `capabilities[${i}]`;
    const type = entry.type as CapabilityMode;
    if (entry.description !== undefined && typeof entry.description !== 'string')
      throw new DescriptorError('invalid_format', `${at}.description must be a string`, { field: `${at}.description` });

    const descriptor: CapabilityDescriptor = {
      name: names[i],
      type,
      description: entry.description ?? '',
      schema: checkedSchema(entry.schema, `${at}.schema`),
      surfaceGuidance: surfaceGuidance(entry.surfaceGuidance, `${at}.surfaceGuidance`, type),
    };
    if (entry.runtimeUrl !== undefined) {
      if (typeof entry.runtimeUrl !== 'string' || entry.runtimeUrl.length > MAX_URL_LENGTH)
        throw new DescriptorError('invalid_format', `${at}.runtimeUrl must be an HTTPS URL of at most ${MAX_URL_LENGTH} characters`, {
          field: `${at}.runtimeUrl`,
        });
      descriptor.runtimeUrl = entry.runtimeUrl;
    }
    if (type === 'state')
      descriptor.refreshInterval = interval(entry.refreshInterval, DEFAULT_REFRESH_INTERVAL_SECONDS, `${at}.refreshInterval`, 86_400);
    if (type === 'realtime')
      descriptor.heartbeatInterval = interval(
        entry.heartbeatInterval,
        DEFAULT_HEARTBEAT_INTERVAL_SECONDS,
        `${at}.heartbeatInterval`,
        3_600,
      );
    if (type === 'webhook') descriptor.events = webhookEvents(entry.events, `${at}.events`, descriptor);
    if (entry.responseSchema !== undefined) {
      const fault = isObject(entry.responseSchema)
        ? checkSchema(entry.responseSchema)
        : { detail: 'must be a JSON Schema object', schemaPath: '$' };
      if (fault)
        throw new DescriptorError('invalid_schema', `${at}.responseSchema: ${fault.detail}`, {
          field: `${at}.responseSchema`,
          schema_path: fault.schemaPath,
        });
      descriptor.responseSchema = entry.responseSchema as JsonSchema;
    }
    if (entry.examples !== undefined) {
      if (!Array.isArray(entry.examples))
        throw new DescriptorError('invalid_format', `${at}.examples must be an array`, { field: `${at}.examples` });
      descriptor.examples = entry.examples;
    }
    return descriptor;
  });
}
