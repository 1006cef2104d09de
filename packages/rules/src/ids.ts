import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 22;

/**
 * An id of the service's shape, `<prefix>_<22 base62 chars>` from a CSPRNG, for
 * what a conformance run makes up (request ids, idempotency keys, a synthetic
 * install): runtimes may check the shape, so the suite's look like real ones.
 */
export function randomId(prefix: string): string {
  let body = '';
  while (body.length < BODY_LENGTH) {
    for (const byte of randomBytes(32)) if (byte < 248 && body.length < BODY_LENGTH) body += ALPHABET[byte % 62];
  }
  return `${prefix}_${body}`;
}
