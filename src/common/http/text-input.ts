import { RequestValidationError } from '../errors/request-validation.error';

/** NUL (PostgreSQL `text` and `jsonb` cannot hold it) or a UTF-16 surrogate without its other half. */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
const ILL_FORMED = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when `text` can be stored and sent on as UTF-8 exactly as received. */
export function isStorableText(text: string): boolean {
  return !ILL_FORMED.test(text);
}

function childPath(parent: string, key: string, isArray: boolean): string {
  if (isArray) return `${parent}[${key}]`;
  return parent === '' ? key : `${parent}.${key}`;
}

function isEmpty(value: object): boolean {
  for (const _key in value) return false;
  return true;
}

/**
 * Path of the first string (value or property name) in `value` that is not storable text, or null.
 * Iterative like the depth check, and run after it, so the walk is bounded by the body limit and depth.
 */
export function firstIllFormedText(value: unknown, root = ''): string | null {
  // Most requests have nothing to walk (no body, an empty query): answered without allocating.
  if (typeof value !== 'object' || value === null) return typeof value === 'string' && !isStorableText(value) ? root : null;
  if (isEmpty(value)) return null;
  const stack: Array<[unknown, string]> = [[value, root]];
  while (stack.length > 0) {
    const [current, path] = stack.pop()!;
    if (typeof current === 'string') {
      if (!isStorableText(current)) return path;
      continue;
    }
    if (current === null || typeof current !== 'object' || ArrayBuffer.isView(current)) continue;
    const isArray = Array.isArray(current);
    const entries = Object.entries(current as Record<string, unknown>);
    for (let i = entries.length - 1; i >= 0; i -= 1) {
      const [key, child] = entries[i];
      // A bad property name is reported at its parent: the name itself is what cannot be shown.
      if (!isStorableText(key)) return path;
      stack.push([child, childPath(path, key, isArray)]);
    }
  }
  return null;
}

/**
 * The one check of ill-formed Unicode, run at the edge for every route (a Fastify hook) over the body,
 * the query and the path parameters, so no field needs its own: a lone surrogate broke class-validator's
 * byte-length check (`URIError`) and PostgreSQL's JSON parsing, NUL is refused by PostgreSQL text.
 */
export function illFormedTextError(request: { body?: unknown; query?: unknown; params?: unknown }): RequestValidationError | null {
  for (const part of [request.params, request.query, request.body]) {
    const field = firstIllFormedText(part);
    if (field === null) continue;
    const name = field === '' ? 'body' : field;
    return new RequestValidationError([
      { field: name, missing: false, message: `${name} must be well-formed Unicode text without NUL characters (\\u0000)` },
    ]);
  }
  return null;
}
