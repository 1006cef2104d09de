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
  'job',
  'whe',
  'dcall',
  'dses',
] as const;
export type IdPrefix = (typeof ID_PREFIXES)[number];

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 22; // 22 base62 characters carry ~131 bits of entropy

/** Random bytes drawn from the CSPRNG in blocks: one call per ~140 ids instead of one per id. */
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

function randomByte(): number {
  if (offset === pool.length) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  return pool[offset++];
}

/**
 * Opaque identifier: `<prefix>_<22 base62 chars>` from a CSPRNG.
 * Rejection sampling keeps every character uniformly distributed; each random
 * byte is used once.
 */
export function newId(prefix: IdPrefix): string {
  let body = '';
  while (body.length < BODY_LENGTH) {
    const byte = randomByte();
    if (byte < 248) body += ALPHABET[byte % 62];
  }
  return `${prefix}_${body}`;
}

const ID_SHAPE = /^([a-z]{2,5})_([0-9A-Za-z]{22})$/;

export function isId(value: unknown, prefix?: IdPrefix): boolean {
  if (typeof value !== 'string') return false;
  const match = ID_SHAPE.exec(value);
  return match !== null && (prefix === undefined || match[1] === prefix);
}
