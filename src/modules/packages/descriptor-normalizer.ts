import { ProblemError } from '../../common/errors/problem-error';
import {
  CAPABILITY_MODES,
  CapabilityDescriptor,
  CapabilityMode,
  Component,
  COMPONENTS,
  Intent,
  INTENTS,
  JsonSchema,
  Placement,
  PLACEMENTS,
  WebhookEventType,
} from './capability-descriptor';
import { checkSchema, jsonPath } from './schema-checker';

const NAME = /^[a-z][a-z0-9_]{0,63}$/;
const EVENT_TYPE = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;
const MAX_CAPABILITIES = 50;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function missing(field: string): never {
  throw new ProblemError('missing_field', `${field} is required`, { field });
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], field: string): T {
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    throw new ProblemError('invalid_format', `${field} ${JSON.stringify(value)} is not one of: ${allowed.join(', ')}`, { field });
  }
  return value as T;
}

function positiveInt(value: unknown, field: string, max: number): number {
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > max) {
    throw new ProblemError('invalid_format', `${field} must be an integer number of seconds from 1 to ${max}`, { field });
  }
  return value as number;
}

/**
 * The short form writes a schema as a map of field → `{ type, required, items }`.
 * It is recognised when the object is not itself a schema (no `type` string at
 * the top) and every entry carries a `type`.
 */
function isShortForm(schema: Record<string, unknown>): boolean {
  if (typeof schema.type === 'string' || '$schema' in schema || 'properties' in schema) return false;
  const entries = Object.values(schema);
  return entries.length > 0 && entries.every((e) => isObject(e) && typeof e.type === 'string');
}

function expandShortForm(schema: Record<string, unknown>): JsonSchema {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const [name, entry] of Object.entries(schema) as Array<[string, Record<string, unknown>]>) {
    const { required: isRequired, ...rest } = entry;
    properties[name] = rest;
    if (isRequired === true) required.push(name);
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

function checkedSchema(raw: unknown, field: string): JsonSchema {
  if (raw === undefined) missing(field);
  if (!isObject(raw)) throw new ProblemError('invalid_schema', `${field} must be a JSON Schema object`, { field, schema_path: '$' });
  const schema = isShortForm(raw) ? expandShortForm(raw) : raw;
  const fault = checkSchema(schema);
  if (fault) throw new ProblemError('invalid_schema', `${field}: ${fault.detail}`, { field, schema_path: fault.schemaPath });
  return schema;
}

function surfaceGuidance(raw: unknown, field: string): CapabilityDescriptor['surfaceGuidance'] {
  if (raw === undefined) missing(field);
  if (!isObject(raw)) throw new ProblemError('invalid_format', `${field} must be an object`, { field });
  const intent = raw.intent === undefined ? missing(`${field}.intent`) : oneOf<Intent>(raw.intent, INTENTS, `${field}.intent`);
  const placementsRaw = raw.placement ?? missing(`${field}.placement`);
  if (!Array.isArray(placementsRaw) || placementsRaw.length === 0)
    throw new ProblemError('invalid_format', `${field}.placement must be a non-empty array`, { field: `${field}.placement` });
  const placement = placementsRaw.map((p, i) => oneOf<Placement>(p, PLACEMENTS, `${field}.placement[${i}]`));
  // Both spellings occur in the spec; `preferredComponents` wins when both are given.
  const key = raw.preferredComponents !== undefined ? 'preferredComponents' : 'components';
  const componentsRaw = raw[key] ?? missing(`${field}.preferredComponents`);
  if (!Array.isArray(componentsRaw) || componentsRaw.length === 0)
    throw new ProblemError('invalid_format', `${field}.${key} must be a non-empty array`, { field: `${field}.${key}` });
  const preferredComponents = componentsRaw.map((c, i) => oneOf<Component>(c, COMPONENTS, `${field}.${key}[${i}]`));
  return { intent, placement: [...new Set(placement)], preferredComponents: [...new Set(preferredComponents)] };
}

function webhookEvents(raw: unknown, field: string): WebhookEventType[] {
  if (raw === undefined) missing(field);
  if (!Array.isArray(raw) || raw.length === 0)
    throw new ProblemError('invalid_format', `${field} must list at least one event type`, { field });
  const seen = new Set<string>();
  return raw.map((entry, i) => {
    const at = `${field}[${i}]`;
    if (!isObject(entry)) throw new ProblemError('invalid_format', `${at} must be an object with type and schema`, { field: at });
    if (entry.type === undefined) missing(`${at}.type`);
    if (typeof entry.type !== 'string' || !EVENT_TYPE.test(entry.type)) {
      throw new ProblemError('invalid_format', `${at}.type must be dotted lowercase words such as "meeting.updated"`, {
        field: `${at}.type`,
      });
    }
    if (seen.has(entry.type))
      throw new ProblemError('invalid_format', `${at}.type ${entry.type} is registered twice`, { field: `${at}.type` });
    seen.add(entry.type);
    return {
      type: entry.type,
      description: typeof entry.description === 'string' ? entry.description : '',
      schema: checkedSchema(entry.schema, `${at}.schema`),
    };
  });
}

/**
 * Validates capability descriptors (full or short form) and normalises them to
 * the one stored form. Errors name the offending field, e.g.
 * `capabilities[1].surfaceGuidance.intent`; names of fields are case-sensitive.
 */
export function normaliseCapabilities(raw: unknown): CapabilityDescriptor[] {
  if (raw === undefined) missing('capabilities');
  if (!Array.isArray(raw) || raw.length === 0)
    throw new ProblemError('invalid_format', 'capabilities must be an array with at least one capability descriptor', {
      field: 'capabilities',
    });
  if (raw.length > MAX_CAPABILITIES)
    throw new ProblemError('invalid_format', `at most ${MAX_CAPABILITIES} capabilities per version`, { field: 'capabilities' });
  const names = new Set<string>();
  return raw.map((entry, i) => {
    const at = `capabilities[${i}]`;
    if (!isObject(entry)) throw new ProblemError('invalid_format', `${at} must be an object`, { field: at });
    if (entry.type === undefined) missing(`${at}.type`);
    const type = oneOf<CapabilityMode>(entry.type, CAPABILITY_MODES, `${at}.type`);
    if (entry.name === undefined) missing(`${at}.name`);
    if (typeof entry.name !== 'string' || !NAME.test(entry.name)) {
      throw new ProblemError(
        'invalid_format',
        `${at}.name must be lowercase letters, digits and underscores, starting with a letter (it is used in runtime paths)`,
        { field: `${at}.name` },
      );
    }
    if (names.has(entry.name))
      throw new ProblemError('invalid_format', `${at}.name ${entry.name} is used by two capabilities`, { field: `${at}.name` });
    names.add(entry.name);
    if (entry.description === undefined) missing(`${at}.description`);
    if (typeof entry.description !== 'string')
      throw new ProblemError('invalid_format', `${at}.description must be a string`, { field: `${at}.description` });

    const descriptor: CapabilityDescriptor = {
      name: entry.name,
      type,
      description: entry.description,
      schema: checkedSchema(entry.schema, `${at}.schema`),
      surfaceGuidance: surfaceGuidance(entry.surfaceGuidance, `${at}.surfaceGuidance`),
    };
    if (type === 'state')
      descriptor.refreshInterval = positiveInt(entry.refreshInterval ?? missing(`${at}.refreshInterval`), `${at}.refreshInterval`, 86_400);
    if (type === 'realtime')
      descriptor.heartbeatInterval = positiveInt(
        entry.heartbeatInterval ?? missing(`${at}.heartbeatInterval`),
        `${at}.heartbeatInterval`,
        3_600,
      );
    if (type === 'webhook') descriptor.events = webhookEvents(entry.events, `${at}.events`);
    if (entry.responseSchema !== undefined) {
      const fault = isObject(entry.responseSchema)
        ? checkSchema(entry.responseSchema)
        : { detail: 'must be a JSON Schema object', schemaPath: '$' };
      if (fault)
        throw new ProblemError('invalid_schema', `${at}.responseSchema: ${fault.detail}`, {
          field: `${at}.responseSchema`,
          schema_path: fault.schemaPath,
        });
      descriptor.responseSchema = entry.responseSchema as JsonSchema;
    }
    if (entry.examples !== undefined) {
      if (!Array.isArray(entry.examples))
        throw new ProblemError('invalid_format', `${at}.examples must be an array`, { field: `${at}.examples` });
      descriptor.examples = entry.examples;
    }
    return descriptor;
  });
}

export { jsonPath };
