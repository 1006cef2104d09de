import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import { isObject } from '../json';
import { JsonSchema } from './capability-descriptor';

/** Why a schema was refused, and where: a JSONPath into the schema such as `$.properties.amount`. */
export interface SchemaFault {
  detail: string;
  schemaPath: string;
}

type Draft = 'draft-07' | '2020-12';

const DRAFT_07_URIS = [
  'http://json-schema.org/draft-07/schema#',
  'http://json-schema.org/draft-07/schema',
  'https://json-schema.org/draft-07/schema#',
  'https://json-schema.org/draft-07/schema',
];
const DRAFT_2020_URIS = ['https://json-schema.org/draft/2020-12/schema', 'https://json-schema.org/draft/2020-12/schema#'];
/** The one spelling of each draft's meta-schema that ajv knows; the others we accept are read as it. */
const AJV_META_URI: Record<Draft, string> = {
  'draft-07': 'http://json-schema.org/draft-07/schema#',
  '2020-12': 'https://json-schema.org/draft/2020-12/schema',
};

/** The schema as ajv must see it: a declared `$schema` in ajv's own spelling (ajv throws on `https://…draft-07…`). */
function forAjv<T extends Record<string, unknown>>(schema: T, draft: Draft): T {
  return schema.$schema === undefined ? schema : { ...schema, $schema: AJV_META_URI[draft] };
}

const COMMON_KEYWORDS = [
  '$schema',
  '$id',
  '$ref',
  '$comment',
  'title',
  'description',
  'default',
  'examples',
  'readOnly',
  'writeOnly',
  'type',
  'enum',
  'const',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'format',
  'items',
  'maxItems',
  'minItems',
  'uniqueItems',
  'contains',
  'maxProperties',
  'minProperties',
  'required',
  'additionalProperties',
  'properties',
  'patternProperties',
  'propertyNames',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
  'contentMediaType',
  'contentEncoding',
  'definitions',
];
/**
 * draft-07 mode deliberately leaves out `if`/`then`/`else`: the spec lists them as
 * unsupported there (use 2020-12 for conditionals).
 */
const KEYWORDS: Record<Draft, Set<string>> = {
  'draft-07': new Set([...COMMON_KEYWORDS, 'additionalItems', 'dependencies']),
  '2020-12': new Set([
    ...COMMON_KEYWORDS,
    '$defs',
    '$anchor',
    '$dynamicRef',
    '$dynamicAnchor',
    '$vocabulary',
    'if',
    'then',
    'else',
    'dependentSchemas',
    'dependentRequired',
    'prefixItems',
    'unevaluatedItems',
    'unevaluatedProperties',
    'minContains',
    'maxContains',
    'deprecated',
  ]),
};
const CONDITIONALS = new Set(['if', 'then', 'else']);
/** Keywords whose value is a schema. */
const SCHEMA_KEYWORDS = [
  'items',
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
];
/** Keywords whose value is an array of schemas. */
const SCHEMA_ARRAY_KEYWORDS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
/** Keywords whose value maps names to schemas. */
const SCHEMA_MAP_KEYWORDS = ['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas'];
/**
 * Keywords that constrain a value without saying its type. The spec's
 * `invalid_schema` rule refuses a property without `type`, so a property with
 * only one of these is refused too, with a detail saying what to add.
 */
const NOT_A_TYPE = ['enum', 'const', '$ref', 'anyOf', 'oneOf', 'allOf'];

export function jsonPath(segments: Array<string | number>): string {
  return segments.reduce<string>((path, s) => {
    if (typeof s === 'number') return `${path}[${s}]`;
    return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(s) ? `${path}.${s}` : `${path}['${s.replace(/'/g, "\\'")}']`;
  }, '$');
}

/**
 * Checks one capability schema the way the spec asks: draft-07 (default) or
 * 2020-12 only, no circular `$ref`, no keyword the draft does not support, no
 * unknown keyword, every property typed; then compiles it with ajv in strict
 * mode. Returns the first fault, or null when the schema is acceptable.
 */
export function checkSchema(schema: unknown, options: { requireObjectRoot?: boolean } = {}): SchemaFault | null {
  if (!isObject(schema)) return { detail: 'schema must be a JSON Schema object', schemaPath: '$' };
  let draft: Draft = 'draft-07';
  if (schema.$schema !== undefined) {
    if (typeof schema.$schema === 'string' && DRAFT_07_URIS.includes(schema.$schema)) draft = 'draft-07';
    else if (typeof schema.$schema === 'string' && DRAFT_2020_URIS.includes(schema.$schema)) draft = '2020-12';
    else return { detail: `$schema ${JSON.stringify(schema.$schema)} is not supported; use draft-07 or 2020-12`, schemaPath: '$.$schema' };
  }
  if (options.requireObjectRoot !== false && schema.type !== 'object') {
    return { detail: 'the capability schema must have type "object"', schemaPath: '$.type' };
  }
  return walk(schema, [], draft) ?? findCircularRef(schema) ?? compile(schema, draft);
}

function walk(node: unknown, path: Array<string | number>, draft: Draft): SchemaFault | null {
  if (typeof node === 'boolean') return null;
  if (!isObject(node)) return { detail: 'a subschema must be an object or a boolean', schemaPath: jsonPath(path) };
  for (const keyword of Object.keys(node)) {
    if (KEYWORDS[draft].has(keyword)) continue;
    if (draft === 'draft-07' && CONDITIONALS.has(keyword)) {
      return {
        detail: `keyword "${keyword}" is not supported in draft-07 mode; declare "$schema": "https://json-schema.org/draft/2020-12/schema" to use if/then/else`,
        schemaPath: jsonPath([...path, keyword]),
      };
    }
    return { detail: `unknown keyword "${keyword}" for ${draft}`, schemaPath: jsonPath([...path, keyword]) };
  }
  if (isObject(node.properties)) {
    for (const [name, property] of Object.entries(node.properties)) {
      if (isObject(property) && !('type' in property)) {
        const without = NOT_A_TYPE.find((k) => k in property);
        const hint = without === undefined ? '' : ` ("${without}" does not replace it; declare "type" beside it)`;
        return { detail: `property "${name}" has no type${hint}`, schemaPath: jsonPath([...path, 'properties', name]) };
      }
    }
  }
  for (const keyword of SCHEMA_KEYWORDS) {
    const child = node[keyword];
    if (child === undefined) continue;
    if (keyword === 'items' && Array.isArray(child)) {
      for (const [i, item] of child.entries()) {
        const fault = walk(item, [...path, keyword, i], draft);
        if (fault) return fault;
      }
      continue;
    }
    const fault = walk(child, [...path, keyword], draft);
    if (fault) return fault;
  }
  for (const keyword of SCHEMA_ARRAY_KEYWORDS) {
    const list = node[keyword];
    if (!Array.isArray(list)) continue;
    for (const [i, item] of list.entries()) {
      const fault = walk(item, [...path, keyword, i], draft);
      if (fault) return fault;
    }
  }
  for (const keyword of SCHEMA_MAP_KEYWORDS) {
    const map = node[keyword];
    if (!isObject(map)) continue;
    for (const [name, child] of Object.entries(map)) {
      const fault = walk(child, [...path, keyword, name], draft);
      if (fault) return fault;
    }
  }
  return null;
}

/** Every `$ref` in the schema with where it sits. */
function collectRefs(node: unknown, path: Array<string | number>, out: Array<{ ref: string; path: Array<string | number> }>): void {
  if (Array.isArray(node)) node.forEach((child, i) => collectRefs(child, [...path, i], out));
  else if (isObject(node)) {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') out.push({ ref: value, path: [...path, key] });
      else if (key !== 'enum' && key !== 'const' && key !== 'examples' && key !== 'default') collectRefs(value, [...path, key], out);
    }
  }
}

/**
 * Refuses `$ref` cycles (a definition that reaches itself), refs that point
 * nowhere, and remote refs (the service never fetches schemas).
 */
function findCircularRef(schema: Record<string, unknown>): SchemaFault | null {
  const refs: Array<{ ref: string; path: Array<string | number> }> = [];
  collectRefs(schema, [], refs);
  const pointerPath = (ref: string) =>
    ref
      .slice(2)
      .split('/')
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  for (const { ref, path } of refs) {
    if (!ref.startsWith('#'))
      return { detail: `$ref ${ref} points outside the schema; only local references (#/...) are allowed`, schemaPath: jsonPath(path) };
    if (ref === '#') return { detail: '$ref "#" refers to the whole schema, which is circular', schemaPath: jsonPath(path) };
    let target: unknown = schema;
    for (const part of pointerPath(ref)) target = isObject(target) ? target[part] : undefined;
    if (target === undefined) return { detail: `$ref ${ref} does not resolve`, schemaPath: jsonPath(path) };
  }
  // A ref is circular when it sits inside the definition it (transitively) points to.
  const refsUnder = (prefix: string[]) => refs.filter((r) => prefix.every((p, i) => r.path[i] === p));
  for (const start of refs) {
    const seen = new Set<string>();
    const stack = [start.ref];
    while (stack.length > 0) {
      const ref = stack.pop()!;
      const target = pointerPath(ref);
      if (target.every((p, i) => start.path[i] === p))
        return { detail: `circular $ref: ${start.ref} refers back to a schema that contains it`, schemaPath: jsonPath(start.path) };
      if (seen.has(ref)) continue;
      seen.add(ref);
      for (const inner of refsUnder(target)) stack.push(inner.ref);
    }
  }
  return null;
}

const compilers: Record<Draft, Ajv> = {
  'draft-07': new Ajv({ strict: true, strictRequired: false, allowUnionTypes: true, allErrors: true, validateFormats: false }),
  '2020-12': new Ajv2020({ strict: true, strictRequired: false, allowUnionTypes: true, allErrors: true, validateFormats: false }),
};

function compile(declared: Record<string, unknown>, draft: Draft): SchemaFault | null {
  const ajv = compilers[draft];
  const schema = forAjv(declared, draft);
  if (!ajv.validateSchema(schema)) {
    const error = ajv.errors?.[0];
    const segments = (error?.instancePath ?? '')
      .split('/')
      .filter(Boolean)
      .map((s) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~')));
    return {
      detail: `schema is not valid ${draft}: ${error?.instancePath || 'schema'} ${error?.message ?? ''}`.trim(),
      schemaPath: jsonPath(segments),
    };
  }
  const { $id: _id, ...anonymous } = schema;
  try {
    ajv.compile(anonymous);
    return null;
  } catch (error) {
    return { detail: `schema does not compile: ${(error as Error).message}`, schemaPath: '$' };
  } finally {
    ajv.removeSchema(anonymous); // compiled schemas are cached by object; do not keep every request's
  }
}

/** A validator for data against an accepted schema (runtime responses, webhook payloads). */
export function validatorFor(schema: JsonSchema): (data: unknown) => { valid: boolean; errors: string[] } {
  const draft: Draft = typeof schema.$schema === 'string' && DRAFT_2020_URIS.includes(schema.$schema) ? '2020-12' : 'draft-07';
  const ajv = draft === '2020-12' ? new Ajv2020({ strict: false, allErrors: true }) : new Ajv({ strict: false, allErrors: true });
  addFormats(ajv); // date-time, email, uri … are checked, not ignored with a warning
  const validate = ajv.compile(forAjv(schema, draft));
  return (data) => {
    const valid = validate(data);
    return { valid, errors: valid ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''}`.trim()) };
  };
}

/** Compiled validators by schema text; compiling costs milliseconds, a lookup microseconds. */
const compiled = new LRUCache<string, ReturnType<typeof validatorFor>>({ max: 512 });

/**
 * `validatorFor`, compiled once per distinct schema and reused: for hot paths
 * (every runtime answer, every inbound webhook) whose schemas come from
 * freshly parsed rows, so an object identity cache would never hit.
 */
export function cachedValidatorFor(schema: JsonSchema): (data: unknown) => { valid: boolean; errors: string[] } {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = validatorFor(schema);
    compiled.set(key, validate);
  }
  return validate;
}
