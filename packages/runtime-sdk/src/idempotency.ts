import { createHash } from 'node:crypto';

/** An answer as it was sent, to be sent again for a repeated call. */
export interface StoredAnswer {
  status: number;
  body: unknown;
}

/** What a store holds per idempotency key: the input's hash, and the answer once there is one. */
export interface IdempotencyRecord {
  fingerprint: string;
  answer?: StoredAnswer;
}

/**
 * Where action answers are kept per `X-Service-Idempotency-Key` (spec, rule 3).
 * `claim` must be atomic across every instance of the runtime that shares the
 * store: exactly one caller gets `null` (go ahead) for a key.
 */
export interface IdempotencyStore {
  /** `null` when the key was free and is now claimed for `fingerprint`; else what the key already holds. */
  claim(key: string, fingerprint: string, ttlMs: number): Promise<IdempotencyRecord | null>;
  /** Records the answer of a claimed key, kept for `ttlMs`. */
  complete(key: string, record: Required<IdempotencyRecord>, ttlMs: number): Promise<void>;
  /** Frees a claimed key whose call failed in a way a retry may fix. */
  release(key: string): Promise<void>;
}

/** 24 hours, as most APIs keep idempotency keys (Stripe); the service holds a key for 15 minutes, so this outlasts every retry. */
export const DEFAULT_IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` are the same input. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** SHA-256 of the canonical input: what "the same input" means for a repeated key. */
export function inputFingerprint(input: unknown): string {
  return createHash('sha256').update(canonicalJson(input)).digest('hex');
}

/**
 * A store in this process's memory: for one-instance runtimes and tests.
 * Entries expire after their TTL; past `maxEntries` the oldest are dropped
 * first, so a flood of keys cannot grow it without bound.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly entries = new Map<string, { record: IdempotencyRecord; expiresAt: number }>();

  constructor(private readonly options: { maxEntries?: number; now?: () => number } = {}) {}

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  async claim(key: string, fingerprint: string, ttlMs: number): Promise<IdempotencyRecord | null> {
    const existing = this.entries.get(key);
    if (existing && existing.expiresAt > this.now) return existing.record;
    this.set(key, { fingerprint }, ttlMs);
    return null;
  }

  async complete(key: string, record: Required<IdempotencyRecord>, ttlMs: number): Promise<void> {
    this.set(key, record, ttlMs);
  }

  async release(key: string): Promise<void> {
    this.entries.delete(key);
  }

  private set(key: string, record: IdempotencyRecord, ttlMs: number): void {
    this.entries.delete(key);
    this.entries.set(key, { record, expiresAt: this.now + ttlMs });
    const max = this.options.maxEntries ?? 100_000;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= max) break;
      this.entries.delete(oldest);
    }
  }
}

/** The part of an ioredis client the Redis store uses (ioredis is an optional peer dependency). */
export interface RedisLike {
  set(key: string, value: string, px: 'PX', ttlMs: number, nx: 'NX'): Promise<'OK' | null>;
  set(key: string, value: string, px: 'PX', ttlMs: number): Promise<'OK' | null>;
  get(key: string): Promise<string | null>;
  del(key: string): Promise<number>;
}

/**
 * A store in Redis, shared by every instance of the runtime: a key is claimed
 * with `SET NX PX` (one winner, with an expiry even if the claimer dies), and
 * its answer replaces the claim once sent.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  private readonly prefix: string;

  constructor(
    private readonly redis: RedisLike,
    options: { prefix?: string } = {},
  ) {
    this.prefix = options.prefix ?? 'runtime-sdk:idem:';
  }

  async claim(key: string, fingerprint: string, ttlMs: number): Promise<IdempotencyRecord | null> {
    const claimed = await this.redis.set(this.prefix + key, JSON.stringify({ fingerprint }), 'PX', ttlMs, 'NX');
    if (claimed === 'OK') return null;
    const stored = await this.redis.get(this.prefix + key);
    // Expired between the two commands: the key is free again, so try once more.
    if (stored === null) return this.claim(key, fingerprint, ttlMs);
    return JSON.parse(stored) as IdempotencyRecord;
  }

  async complete(key: string, record: Required<IdempotencyRecord>, ttlMs: number): Promise<void> {
    await this.redis.set(this.prefix + key, JSON.stringify(record), 'PX', ttlMs);
  }

  async release(key: string): Promise<void> {
    await this.redis.del(this.prefix + key);
  }
}
