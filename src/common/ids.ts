import { randomBytes } from 'node:crypto';

export const ID_PREFIXES = [
  'usr',
  'soul',
  'con',
  'grp',
  'msg',
  'act',
  'exp',
  'evt',
  'app',
  'pkg',
  'ver',
  'inst',
  'req',
  'idem',
  'conf',
  'task',
  'dlv',
  'dev',
  'ses',
] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 22; // 22 base62 characters carry ~131 bits of entropy

/**
 * Opaque identifier: `<prefix>_<22 base62 chars>` from a CSPRNG.
 * Rejection sampling keeps every character uniformly distributed.
 */
export function newId(prefix: IdPrefix): string {
  let body = '';
  while (body.length < BODY_LENGTH) {
    for (const byte of randomBytes(32)) {
      if (byte < 248) body += ALPHABET[byte % 62];
      if (body.length === BODY_LENGTH) break;
    }
  }
  return `${prefix}_${body}`;
}

const ID_SHAPE = /^([a-z]{2,5})_([0-9A-Za-z]{22})$/;

export function isId(value: unknown, prefix?: IdPrefix): boolean {
  if (typeof value !== 'string') return false;
  const match = ID_SHAPE.exec(value);
  return match !== null && (prefix === undefined || match[1] === prefix);
}
