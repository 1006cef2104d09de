import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';

/** How long a key holds its response; after that the key may be used again. */
const KEY_LIFETIME = '24 hours';

/** The first request's hash and response, as stored with its key. */
export interface StoredKey {
  requestHash: string;
  responseStatus: number;
  responseBody: unknown;
}

interface StoredKeyRow {
  request_hash: string;
  response_status: number;
  response_body: unknown;
}

/**
 * The `idempotency_keys` table: one row per (owner, scope, key), written in
 * the transaction of the work it guards, so a rolled-back attempt frees its key.
 */
@Injectable()
export class IdempotencyKeysRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /**
   * Takes the key for this request: inserts its row (an empty response for
   * now), or takes over an expired one. Answers false when a live row holds
   * the key; a concurrent request's row is waited for until it commits or rolls back.
   */
  async claim(tx: Tx, key: { ownerId: string; scope: string; key: string; requestHash: string }): Promise<boolean> {
    const claimed = await this.rows<{ key: string }>(
      `INSERT INTO idempotency_keys (owner_id, scope, key, request_hash, response_status, response_body, expires_at)
         VALUES ($1, $2, $3, $4, 0, 'null', now() + interval '${KEY_LIFETIME}')
         ON CONFLICT (owner_id, scope, key) DO UPDATE
           SET request_hash = EXCLUDED.request_hash, response_status = 0, response_body = 'null',
               created_at = now(), expires_at = EXCLUDED.expires_at
           WHERE idempotency_keys.expires_at < now()
         RETURNING key`,
      [key.ownerId, key.scope, key.key, key.requestHash],
      tx,
    );
    return claimed.length > 0;
  }

  /**
   * `claim` as a CTE of the caller's single statement, storing the response
   * with the key: one row per row of `source` whose key is taken (inserted,
   * or an expired one taken over), returning its `owner_id`, `scope` and
   * `key`. Every argument is an SQL expression; the response body may use
   * `source`'s columns. A live key yields no row, and a concurrent holder is
   * waited for, as with `claim`. One statement may not take the same key
   * twice (PostgreSQL refuses to update a row twice in one statement).
   */
  static claimWithResponseSql(args: {
    name: string;
    source: string;
    ownerId: string;
    scope: string;
    key: string;
    requestHash: string;
    status: string;
    body: string;
  }): string {
    return `${args.name} AS (
         INSERT INTO idempotency_keys (owner_id, scope, key, request_hash, response_status, response_body, expires_at)
         SELECT ${args.ownerId}, ${args.scope}, ${args.key}, ${args.requestHash}, ${args.status}, ${args.body}, now() + interval '${KEY_LIFETIME}'
           FROM ${args.source}
         ON CONFLICT (owner_id, scope, key) DO UPDATE
           SET request_hash = EXCLUDED.request_hash, response_status = EXCLUDED.response_status,
               response_body = EXCLUDED.response_body, created_at = now(), expires_at = EXCLUDED.expires_at
           WHERE idempotency_keys.expires_at < now()
         RETURNING owner_id, scope, key)`;
  }

  async find(tx: Tx, ownerId: string, scope: string, key: string): Promise<StoredKey | null> {
    const row = await this.first<StoredKeyRow>(
      `SELECT request_hash, response_status, response_body FROM idempotency_keys WHERE owner_id = $1 AND scope = $2 AND key = $3`,
      [ownerId, scope, key],
      tx,
    );
    return row && { requestHash: row.request_hash, responseStatus: row.response_status, responseBody: row.response_body };
  }

  /** Stores the response of the work the key guarded, for replays. */
  async storeResponse(tx: Tx, ownerId: string, scope: string, key: string, response: { status: number; body: unknown }): Promise<void> {
    await this.execute(
      `UPDATE idempotency_keys SET response_status = $4, response_body = $5 WHERE owner_id = $1 AND scope = $2 AND key = $3`,
      [ownerId, scope, key, response.status, JSON.stringify(response.body)],
      tx,
    );
  }

  /** Deletes an owner's keys of one scope, inside the caller's transaction. */
  async deleteScope(tx: Tx, ownerId: string, scope: string): Promise<void> {
    await this.execute(`DELETE FROM idempotency_keys WHERE owner_id = $1 AND scope = $2`, [ownerId, scope], tx);
  }

  /** Deletes expired keys; answers how many. */
  async purgeExpired(): Promise<number> {
    const { count } = await this.changed(`DELETE FROM idempotency_keys WHERE expires_at < now()`);
    return count;
  }
}
