import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../errors/api-error';
import { assertIdempotencyKey, requestHash as hashOf } from './idempotency-key';

export interface StoredResponse {
  status: number;
  body: unknown;
}

const KEY_LIFETIME = '24 hours';

/**
 * `Idempotency-Key` handling as Stripe does it. The key row is inserted in the
 * same transaction as the work, so:
 * - a retry with the same key and body gets the stored first response, and the work is not repeated;
 * - a concurrent request with the same key waits on the row lock until the first commits, then replays it;
 * - if the first attempt fails and rolls back, the key is free again;
 * - the same key with a different body is refused with `BAD_REQUEST`.
 * Keys expire after 24 hours, after which the key may be reused.
 */
@Injectable()
export class Idempotency {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async run(
    ownerId: string,
    scope: string,
    key: string | undefined,
    request: unknown,
    work: (manager: EntityManager) => Promise<StoredResponse>,
  ): Promise<StoredResponse & { replayed: boolean }> {
    if (key === undefined) return { ...(await this.dataSource.transaction(work)), replayed: false };
    assertIdempotencyKey(key);
    const requestHash = hashOf(request);

    return this.dataSource.transaction(async (manager) => {
      const claimed: unknown[] = await manager.query(
        `INSERT INTO idempotency_keys (owner_id, scope, key, request_hash, response_status, response_body, expires_at)
         VALUES ($1, $2, $3, $4, 0, 'null', now() + interval '${KEY_LIFETIME}')
         ON CONFLICT (owner_id, scope, key) DO UPDATE
           SET request_hash = EXCLUDED.request_hash, response_status = 0, response_body = 'null',
               created_at = now(), expires_at = EXCLUDED.expires_at
           WHERE idempotency_keys.expires_at < now()
         RETURNING key`,
        [ownerId, scope, key, requestHash],
      );
      if (claimed.length === 0) {
        const [first]: Array<{ request_hash: string; response_status: number; response_body: unknown }> = await manager.query(
          `SELECT request_hash, response_status, response_body FROM idempotency_keys WHERE owner_id = $1 AND scope = $2 AND key = $3`,
          [ownerId, scope, key],
        );
        if (first.request_hash !== requestHash) {
          throw new ApiError('BAD_REQUEST', 'This Idempotency-Key was already used with a different request body; use a new key');
        }
        return { status: first.response_status, body: first.response_body, replayed: true };
      }
      const response = await work(manager);
      await manager.query(
        `UPDATE idempotency_keys SET response_status = $4, response_body = $5 WHERE owner_id = $1 AND scope = $2 AND key = $3`,
        [ownerId, scope, key, response.status, JSON.stringify(response.body)],
      );
      return { ...response, replayed: false };
    });
  }

  /** Drops expired keys (called by the retention job). */
  async purgeExpired(): Promise<number> {
    const [, count]: [unknown, number] = await this.dataSource.query(`DELETE FROM idempotency_keys WHERE expires_at < now()`);
    return count;
  }
}
