import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import * as argon2 from 'argon2';

/** OWASP's argon2id baseline (19 MiB, t=2, p=1): strong, and cheap enough for a login endpoint. */
const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, ARGON2_OPTIONS);
}

// A real hash of a random password: unknown emails cost the same argon2 verification as wrong passwords.
const DUMMY_HASH = hashPassword(randomBytes(16).toString('hex'));

export async function verifyPassword(hash: string | null, password: string): Promise<boolean> {
  if (hash === null) {
    await argon2.verify(await DUMMY_HASH, password).catch(() => false);
    return false;
  }
  return argon2.verify(hash, password).catch(() => false);
}

/** A high-entropy secret with a readable prefix, e.g. `cs_…` (client secret), `evt_`-free namespace. */
export function newSecret(prefix: string, bytes = 32): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url')}`;
}

/**
 * Machine secrets (client secrets, verification and refresh tokens) carry 256
 * random bits, so a fast SHA-256 is as safe as a slow hash and keeps the token
 * endpoint cheap; passwords, which people choose, get argon2id.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
