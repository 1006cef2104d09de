import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { Tx } from '../../infra/database/sql-repository';
import { ApiError } from '../errors/api-error';
import { assertIdempotencyKey, requestHash as hashOf } from './idempotency-key';
import { IdempotencyKeysRepository } from './idempotency-keys.repository';

export interface StoredResponse {
  status: number;
  body: unknown;
}

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
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    // Nest injects the module's repository; the unit tests build the service from a data source alone.
    private readonly keys: IdempotencyKeysRepository = new IdempotencyKeysRepository(dataSource),
  ) {}

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
      const claimed = await this.keys.claim(manager, { ownerId, scope, key, requestHash });
      if (!claimed) {
        const first = (await this.keys.find(manager, ownerId, scope, key))!;
        if (first.requestHash !== requestHash) {
          throw new ApiError('BAD_REQUEST', 'This Idempotency-Key was already used with a different request body; use a new key');
        }
        return { status: first.responseStatus, body: first.responseBody, replayed: true };
      }
      const response = await work(manager);
      await this.keys.storeResponse(manager, ownerId, scope, key, response);
      return { ...response, replayed: false };
    });
  }

  /**
   * Forgets an owner's keys of one scope in the caller's transaction, so a
   * replay cannot answer with what the change removes (an erased soul's exports).
   */
  forgetScope(tx: Tx, ownerId: string, scope: string): Promise<void> {
    return this.keys.deleteScope(tx, ownerId, scope);
  }

  /** Drops expired keys (called by the retention job). */
  purgeExpired(): Promise<number> {
    return this.keys.purgeExpired();
  }
}
