import { isObject } from '../json';
import { JsonSchema } from '../descriptors/capability-descriptor';

function resolveRef(root: JsonSchema, node: Record<string, unknown>): Record<string, unknown> {
  let current = node;
  for (let depth = 0; depth < 8 && typeof current.$ref === 'string' && current.$ref.startsWith('#/'); depth += 1) {
    let target: unknown = root;
    for (const part of current.$ref.slice(2).split('/')) {
      target = isObject(target) ? target[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    }
    if (!isObject(target)) break;
    current = target;
  }
  return current;
}

function firstType(node: Record<string, unknown>): string | undefined {
  if (typeof node.type === 'string') return node.type;
  if (Array.isArray(node.type)) return node.type.find((t): t is string => typeof t === 'string' && t !== 'null');
  return undefined;
}

const STRING_FORMATS: Record<string, string> = {
  'date-time': '2024-01-15T09:30:00Z',
  date: '2024-01-15',
  time: '09:30:00Z',
  email: 'conformance@example.com',
  uri: 'https://example.com/conformance',
  url: 'https://example.com/conformance',
  uuid: '3f0c8f8e-5a6b-4c1d-9e2f-7a8b9c0d1e2f',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
};

/**
 * A value that satisfies `schema` as far as simple keywords tell (default,
 * const, examples, enum, type, format, bounds, required properties). Used for
 * live calls when a capability has no usable example; the checks report when
 * the result still does not validate, and the fix is an example.
 */
export function sampleFor(schema: unknown, root: JsonSchema = schema as JsonSchema, depth = 0): unknown {
  if (!isObject(schema) || depth > 8) return null;
  const node = resolveRef(root, schema);
  if ('default' in node) return node.default;
  if ('const' in node) return node.const;
  if (Array.isArray(node.examples) && node.examples.length > 0) return node.examples[0];
  if (Array.isArray(node.enum) && node.enum.length > 0) return node.enum[0];
  for (const key of ['oneOf', 'anyOf', 'allOf'] as const) {
    const list = node[key];
    if (Array.isArray(list) && list.length > 0 && firstType(node) === undefined) return sampleFor(list[0], root, depth + 1);
  }
  switch (firstType(node) ?? (isObject(node.properties) ? 'object' : undefined)) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const properties = isObject(node.properties) ? node.properties : {};
      const required = Array.isArray(node.required) ? node.required.filter((r): r is string => typeof r === 'string') : [];
      for (const name of required) if (name in properties) out[name] = sampleFor(properties[name], root, depth + 1);
      return out;
    }
    case 'array': {
      const min = typeof node.minItems === 'number' ? node.minItems : 0;
      return Array.from({ length: min }, () => sampleFor(node.items, root, depth + 1));
    }
    case 'integer':
    case 'number': {
      const integer = firstType(node) === 'integer';
      let value = 1;
      if (typeof node.minimum === 'number') value = node.minimum;
      else if (typeof node.exclusiveMinimum === 'number') value = node.exclusiveMinimum + (integer ? 1 : 0.5);
      if (typeof node.maximum === 'number' && value > node.maximum) value = node.maximum;
      return integer ? Math.ceil(value) : value;
    }
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'string': {
      const fromFormat = typeof node.format === 'string' ? STRING_FORMATS[node.format] : undefined;
      if (fromFormat) return fromFormat;
      const min = typeof node.minLength === 'number' ? node.minLength : 0;
      const max = typeof node.maxLength === 'number' ? node.maxLength : Infinity;
      const text = 'conformance'.padEnd(min, 'x');
      return text.slice(0, Math.max(min, Math.min(text.length, max)));
    }
    default:
      return null;
  }
}

/** A value of the wrong JSON type for the property, or outside its enum. */
export function wrongValueFor(schema: unknown, root: JsonSchema): unknown {
  const node = isObject(schema) ? resolveRef(root, schema) : {};
  if (Array.isArray(node.enum)) return '__not_in_enum__';
  switch (firstType(node)) {
    case 'string':
      return 12345;
    case 'integer':
    case 'number':
      return 'not-a-number';
    case 'boolean':
      return 'not-a-boolean';
    case 'array':
      return 'not-an-array';
    case 'object':
      return 'not-an-object';
    default:
      return { unexpected: true };
  }
}

/**
 * Invalid params for a capability: an undeclared `__invalid__` property plus a
 * wrong-typed value for one declared property (a required one when there is
 * one). Null when nothing declared can be made wrong and undeclared properties
 * are allowed, since then no params are invalid.
 */
export function invalidParamsFor(
  schema: JsonSchema,
  valid: Record<string, unknown>,
): { params: Record<string, unknown>; field: string } | null {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required)
    ? schema.required.filter((r): r is string => typeof r === 'string' && r in properties)
    : [];
  const field = required[0] ?? Object.keys(properties)[0];
  if (field === undefined) {
    return schema.additionalProperties === false ? { params: { ...valid, __invalid__: true }, field: '__invalid__' } : null;
  }
  return { params: { ...valid, __invalid__: true, [field]: wrongValueFor(properties[field], schema) }, field };
}

/**
 * A valid input that differs from `input` in one property (for the idempotency
 * conflict probe), or null when no property can be changed safely.
 */
export function alteredInput(schema: JsonSchema, input: Record<string, unknown>): Record<string, unknown> | null {
  const properties = isObject(schema.properties) ? schema.properties : {};
  for (const [name, raw] of Object.entries(properties)) {
    const node = isObject(raw) ? resolveRef(schema, raw) : {};
    if ('const' in node || 'pattern' in node || 'format' in node) continue;
    const current = input[name];
    if (Array.isArray(node.enum)) {
      const other = (node.enum as unknown[]).find((v) => JSON.stringify(v) !== JSON.stringify(current));
      if (other !== undefined) return { ...input, [name]: other };
      continue;
    }
    const type = firstType(node);
    if ((type === 'integer' || type === 'number') && typeof current === 'number') {
      const up = current + 1;
      const down = current - 1;
      const fits = (v: number) =>
        (typeof node.maximum !== 'number' || v <= node.maximum) && (typeof node.minimum !== 'number' || v >= node.minimum);
      if (fits(up)) return { ...input, [name]: up };
      if (fits(down)) return { ...input, [name]: down };
    }
    if (type === 'string' && typeof current === 'string') {
      const changed = current.length > 0 && current.endsWith('2') ? `${current.slice(0, -1)}3` : `${current.slice(0, -1)}2`;
      const max = typeof node.maxLength === 'number' ? node.maxLength : Infinity;
      const min = typeof node.minLength === 'number' ? node.minLength : 0;
      if (changed.length <= max && changed.length >= min && changed !== current) return { ...input, [name]: changed };
    }
    if (type === 'boolean' && typeof current === 'boolean') return { ...input, [name]: !current };
  }
  return null;
}
