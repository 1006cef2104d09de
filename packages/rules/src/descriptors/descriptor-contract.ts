import Ajv2020, { ErrorObject } from 'ajv/dist/2020';
import { DescriptorError, DescriptorFault } from '../descriptor-error';
import { isObject } from '../json';
import { isShortForm, expandShortForm } from './descriptor-normalizer';
import { nearestName } from './field-suggestion';
import DESCRIPTOR_SCHEMA from './package-descriptor.schema.json';
import { checkSchema, jsonPath } from './schema-checker';

/**
 * The package descriptor as one checked contract: package-descriptor.schema.json
 * (JSON Schema 2020-12, published at DESCRIPTOR_SCHEMA_URL_PATH) says every
 * field, its type, allowed values and default; ajv checks create, version and
 * validate bodies against it with every error collected. What a schema cannot
 * say stays in code below (`semanticErrors`): the capabilities' own JSON Schemas
 * (schema-checker.ts), capability names and event types unique in their list.
 * Unknown fields are refused at any depth with the nearest known name.
 */

export const DESCRIPTOR_SCHEMA_URL_PATH = '/v1/providers/descriptor.schema.json';
export { DESCRIPTOR_SCHEMA };

/** Which body is checked: a new package, a new version, or a draft sent to validate. */
export type DescriptorRequest = 'package' | 'version' | 'draft';

/** Bounds the answer to a hostile body of many bad capabilities. */
export const MAX_REPORTED_ERRORS = 100;

const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true, strictRequired: false });
// Our annotation: the message of a field's rule when ajv's own would not say what is wanted.
ajv.addKeyword({ keyword: 'x-error', schemaType: 'string' });
ajv.addSchema(DESCRIPTOR_SCHEMA);
const validators: Record<DescriptorRequest, ReturnType<typeof ajv.compile>> = {
  package: ajv.getSchema(`${DESCRIPTOR_SCHEMA_URL_PATH}#/$defs/package`)!,
  version: ajv.getSchema(`${DESCRIPTOR_SCHEMA_URL_PATH}#/$defs/version`)!,
  draft: ajv.getSchema(`${DESCRIPTOR_SCHEMA_URL_PATH}#/$defs/draft`)!,
};

type Json = Record<string, unknown>;
const defs = DESCRIPTOR_SCHEMA.$defs as Record<string, Json>;

/** Where each subschema sits in the published schema (ajv's own schemaPath restarts at every `$ref`). */
const locations = new Map<unknown, Array<string | number>>();
(function locate(node: unknown, path: Array<string | number>) {
  if (Array.isArray(node)) node.forEach((child, i) => locate(child, [...path, i]));
  else if (isObject(node)) {
    locations.set(node, path);
    for (const [key, child] of Object.entries(node)) locate(child, [...path, key]);
  }
})(DESCRIPTOR_SCHEMA, []);

const MODES = ['state', 'action', 'history', 'realtime', 'webhook'] as const;
const MODE_FIELDS = new Map(MODES.map((mode) => [mode, Object.keys(defs[`${mode}Capability`].properties as Json)]));
const SURFACE_FIELDS = Object.keys(defs.surfaceGuidance.properties as Json);
const MODE_DEFS = new Map<unknown, string>(MODES.map((mode) => [defs[`${mode}Capability`], mode]));
const FULL_FORM_DEFS = new Set<unknown>([defs.jsonSchemaObject]);
const SHORT_FORM_DEFS = new Set<unknown>([defs.shortFormSchema, defs.shortFormField]);

/** Fields whose value is a JSON Schema of the provider's: errors inside them are `invalid_schema`, located by JSONPath. */
function schemaValued(segments: Array<string | number>): number {
  if (segments[0] !== 'capabilities' || typeof segments[1] !== 'number') return 0;
  if (segments[2] === 'schema' || segments[2] === 'responseSchema') return 3;
  if (segments[2] === 'events' && typeof segments[3] === 'number' && segments[4] === 'schema') return 5;
  return 0;
}

function segmentsOf(pointer: string): Array<string | number> {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => (/^(0|[1-9]\d*)$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~')));
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
/** A request field as the API names it: `capabilities[0].surfaceGuidance.intent`. */
export function fieldName(segments: Array<string | number>): string {
  return segments.reduce<string>((path, s) => {
    if (typeof s === 'number') return `${path}[${s}]`;
    const shown = s.length > 64 ? `${s.slice(0, 64)}…` : s;
    if (!IDENTIFIER.test(s)) return `${path}[${JSON.stringify(shown)}]`;
    return path === '' ? shown : `${path}.${shown}`;
  }, '');
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

const ARTICLE: Record<string, string> = { integer: 'an integer', object: 'an object', array: 'an array' };

function ruleText(error: ErrorObject): string {
  const parent = (error.parentSchema ?? {}) as Json;
  const own = error.keyword === 'not' && isObject(parent.not) ? parent.not['x-error'] : undefined;
  const annotated = (own ?? parent['x-error']) as string | undefined;
  switch (error.keyword) {
    case 'type': {
      const type = String(error.params.type);
      return `must be ${ARTICLE[type] ?? `a ${type}`}${error.data === null ? ', not null' : ''}`;
    }
    case 'enum':
      return `${shown(error.data)} is not one of: ${(error.params.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(error.params.allowedValue)}`;
    case 'minProperties':
      return 'must name at least one field (short form) or be a JSON Schema with "type": "object"';
    default:
      return annotated ?? error.message ?? 'is not valid';
  }
}

/** The message for an unknown field, with the nearest known name or where the field belongs instead. */
function unknownField(field: string, name: string, parent: unknown): string {
  const known = Object.keys(((parent as Json).properties ?? {}) as Json).filter((k) => k !== '$schema');
  const near = nearestName(name, known);
  if (near !== undefined) return `\`${field}\` is not a known field; did you mean \`${near}\`?`;
  const mode = MODE_DEFS.get(parent);
  if (mode !== undefined) {
    const owners = MODES.filter((m) => m !== mode && MODE_FIELDS.get(m)!.includes(name));
    if (owners.length > 0) return `\`${field}\` is not a field of ${mode} capabilities (only of ${owners.join(', ')})`;
    const guidance = nearestName(name, SURFACE_FIELDS);
    if (guidance !== undefined) {
      const canonical = guidance === 'components' ? 'preferredComponents' : guidance;
      return `\`${field}\` is not a known field; did you mean \`surfaceGuidance.${canonical}\`?`;
    }
  }
  return `\`${field}\` is not a known field; known fields here: ${known.join(', ')}`;
}

function dataAt(body: unknown, segments: Array<string | number>): unknown {
  return segments.reduce<unknown>((node, s) => (isObject(node) || Array.isArray(node) ? (node as Json)[s as string] : undefined), body);
}

/** A schema meant as the full form (the short form has no `type` string, `$schema` or `properties` at the top). */
function meantAsFullForm(value: unknown): boolean {
  return (
    !isObject(value) || Object.keys(value).length === 0 || typeof value.type === 'string' || '$schema' in value || 'properties' in value
  );
}

/**
 * The capability `schema` is "full form or short form" (anyOf): report only the
 * errors of the form the provider evidently meant, not both branches.
 */
function withoutOtherForm(errors: ErrorObject[], body: unknown): ErrorObject[] {
  const choices = errors.filter((e) => e.keyword === 'anyOf' && e.parentSchema === defs.capabilitySchema);
  let kept = errors.filter((e) => !choices.includes(e));
  for (const choice of choices) {
    const rejected = meantAsFullForm(dataAt(body, segmentsOf(choice.instancePath))) ? SHORT_FORM_DEFS : FULL_FORM_DEFS;
    kept = kept.filter(
      (e) =>
        !(
          (e.instancePath === choice.instancePath || e.instancePath.startsWith(`${choice.instancePath}/`)) &&
          rejected.has(definitionOf(e.parentSchema))
        ),
    );
  }
  return kept;
}

/** The `$defs` entry a subschema belongs to. */
function definitionOf(schema: unknown): unknown {
  const path = locations.get(schema);
  return path && path[0] === '$defs' ? defs[path[1] as string] : undefined;
}

function toDescriptorFault(error: ErrorObject): DescriptorFault {
  const rule = [...(locations.get(error.parentSchema) ?? []), error.keyword];
  const at = segmentsOf(error.instancePath);
  let segments = at;
  if (error.keyword === 'required') segments = [...segments, String(error.params.missingProperty)];
  if (error.keyword === 'additionalProperties') segments = [...segments, String(error.params.additionalProperty)];
  const inSchema = schemaValued(segments);
  // Inside a provider's schema (not the schema field itself missing): located by JSONPath as invalid_schema.
  if (inSchema > 0 && at.length >= inSchema) {
    const field = fieldName(segments.slice(0, inSchema));
    const where = jsonPath(segments.slice(inSchema));
    const text = error.keyword === 'required' ? 'is required' : ruleText(error);
    return { code: 'invalid_schema', field, schema_path: where, message: `${field}: ${where === '$' ? 'the schema' : where} ${text}` };
  }
  const field = fieldName(segments);
  const schemaPath = jsonPath(rule);
  if (error.keyword === 'required') return { code: 'missing_field', field, schema_path: schemaPath, message: `${field} is required` };
  if (error.keyword === 'additionalProperties') {
    const name = String(error.params.additionalProperty);
    return { code: 'invalid_format', field, schema_path: schemaPath, message: unknownField(field, name, error.parentSchema) };
  }
  return { code: 'invalid_format', field, schema_path: schemaPath, message: `${field || 'the body'} ${ruleText(error)}` };
}

function schemaFault(raw: unknown, field: string): DescriptorFault | null {
  const schema = isObject(raw) && isShortForm(raw) ? expandShortForm(raw, field) : raw;
  const fault = checkSchema(schema);
  return fault && { code: 'invalid_schema', field, schema_path: fault.schemaPath, message: `${field}: ${fault.detail}` };
}

/**
 * What the descriptor schema cannot say, for the parts of the body it accepted
 * (a field with a contract error is not checked again): each JSON Schema given
 * is one the service supports (schema-checker.ts), and names and event types
 * are unique in their list.
 */
function semanticErrors(body: unknown, refused: string[]): DescriptorFault[] {
  const clean = (segments: Array<string | number>) => {
    const pointer = `/${segments.join('/')}`;
    return !refused.some((p) => p === pointer || p.startsWith(`${pointer}/`) || pointer.startsWith(`${p}/`));
  };
  const capabilities = isObject(body) && Array.isArray(body.capabilities) ? body.capabilities : [];
  const errors: DescriptorFault[] = [];
  const names = new Map<string, number>();
  capabilities.forEach((capability, i) => {
    if (!isObject(capability)) return;
    const at = (...rest: Array<string | number>) => ['capabilities', i, ...rest];
    if (typeof capability.name === 'string' && clean(at('name'))) {
      const first = names.get(capability.name);
      if (first === undefined) names.set(capability.name, i);
      else
        errors.push({
          code: 'invalid_format',
          field: fieldName(at('name')),
          schema_path: '$.$defs.name',
          message: `${fieldName(at('name'))} ${capability.name} is used by two capabilities (capabilities[${first}])`,
        });
    }
    for (const key of ['schema', 'responseSchema'] as const) {
      if (capability[key] !== undefined && clean(at(key))) {
        const fault = schemaFault(capability[key], fieldName(at(key)));
        if (fault) errors.push(fault);
      }
    }
    if (!Array.isArray(capability.events)) return;
    const types = new Set<string>();
    capability.events.forEach((event, j) => {
      if (!isObject(event)) return;
      if (typeof event.type === 'string' && clean(at('events', j, 'type'))) {
        if (types.has(event.type)) {
          const field = fieldName(at('events', j, 'type'));
          errors.push({
            code: 'invalid_format',
            field,
            schema_path: '$.$defs.webhookEventType.properties.type',
            message: `${field} ${event.type} is registered twice`,
          });
        }
        types.add(event.type);
      }
      if (event.schema !== undefined && clean(at('events', j, 'schema'))) {
        const fault = schemaFault(event.schema, fieldName(at('events', j, 'schema')));
        if (fault) errors.push(fault);
      }
    });
  });
  return errors;
}

/** Every reason the body breaks the descriptor contract (empty when it keeps it), in the order of the body. */
export function descriptorErrors(kind: DescriptorRequest, body: unknown): DescriptorFault[] {
  const validate = validators[kind];
  const raw = validate(body)
    ? []
    : withoutOtherForm(
        (validate.errors ?? []).filter((e) => e.keyword !== 'if'),
        body,
      );
  const refused = raw.map((e) =>
    e.keyword === 'required' || e.keyword === 'additionalProperties'
      ? `${e.instancePath}/${String(e.params.missingProperty ?? e.params.additionalProperty)}`
      : e.instancePath,
  );
  const seen = new Set<string>();
  const errors: DescriptorFault[] = [];
  const all = [...raw.map(toDescriptorFault), ...semanticErrors(body, refused)];
  // In the order of the body: the package's own fields, then capability by capability.
  const position = (error: DescriptorFault) => Number(/^capabilities\[(\d+)\]/.exec(error.field)?.[1] ?? -1);
  all.sort((a, b) => position(a) - position(b));
  for (const error of all) {
    const key = `${error.field}\u0000${error.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    errors.push(error);
  }
  return errors.slice(0, MAX_REPORTED_ERRORS);
}

/**
 * Throws one error listing every fault (`errors`), the first one's code, `field` and (for
 * `invalid_schema`) `schema_path` at the top as before the contract, so clients reading those keep working.
 */
export function refuseErrors(errors: DescriptorFault[]): void {
  if (errors.length === 0) return;
  const [first] = errors;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more: see errors)` : '';
  throw new DescriptorError(first.code, `${first.message}${more}`, {
    field: first.field,
    ...(first.code === 'invalid_schema' ? { schema_path: first.schema_path } : {}),
    errors: errors.map(({ code, field, schema_path, message }) => ({ field, schema_path, message, code })),
  });
}

/** Checks a request body against the contract and throws a `DescriptorError` listing every fault. */
export function assertDescriptorRequest(kind: DescriptorRequest, body: unknown): void {
  refuseErrors(descriptorErrors(kind, body));
}
