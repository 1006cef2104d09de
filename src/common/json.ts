import { canonicalize } from 'json-canonicalize';

/** A plain JSON object (not null, not an array). */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The JSON Canonicalization Scheme (RFC 8785): sorted keys, no whitespace,
 * ECMAScript number forms, so the same value always hashes the same
 * (derived action keys, confirmation input hashes). Properties whose value is
 * `undefined` are left out, as `JSON.stringify` leaves them out.
 */
export function canonicalJson(value: unknown): string {
  return canonicalize(value) ?? 'null';
}
