import { createHash } from 'node:crypto';
import { ApiError } from '../errors/api-error';

/** 1 to 255 visible ASCII characters (no space, no control characters), as Stripe accepts. */
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

/** Refuses an `Idempotency-Key` outside the accepted shape with `BAD_REQUEST`. */
export function assertIdempotencyKey(key: string): void {
  if (!KEY_SHAPE.test(key)) throw new ApiError('BAD_REQUEST', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
}

/**
 * JSON with object keys sorted, so `{a,b}` and `{b,a}` hash the same. Not the
 * RFC 8785 `canonicalJson` of common/json.ts on purpose: that one leaves out a
 * property whose value is `undefined` and writes a Date through `toJSON`, where
 * this writes `null` and `{}` (test/unit/idempotency-key.spec.ts pins both), so
 * switching would change the hash of request bodies already stored with their keys.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What a retry must repeat to be replayed: the hex SHA-256 of the request body's canonical JSON. */
export function requestHash(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}
