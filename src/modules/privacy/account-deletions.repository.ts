import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';

/** The tombstone of a deleted account: an opaque id and dates, nothing that identifies a person. */
export interface AccountDeletion {
  userId: string;
  accountCreatedAt: Date;
  requestedAt: Date;
  /** null while the erasure job has not finished. */
  erasedAt: Date | null;
}

interface AccountDeletionRow {
  user_id: string;
  account_created_at: Date;
  requested_at: Date;
  erased_at: Date | null;
}

const toDeletion = (row: AccountDeletionRow): AccountDeletion => ({
  userId: row.user_id,
  accountCreatedAt: row.account_created_at,
  requestedAt: row.requested_at,
  erasedAt: row.erased_at,
});

/** The `account_deletions` table (`DELETE /v1/me`). */
@Injectable()
export class AccountDeletionsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** Records the request; null when the account already had one (a concurrent or repeated `DELETE /v1/me`). */
  async insertRequested(tx: Tx, userId: string, accountCreatedAt: Date): Promise<AccountDeletion | null> {
    const row = await this.first<AccountDeletionRow>(
      `INSERT INTO account_deletions (user_id, account_created_at) VALUES ($1, $2)
       ON CONFLICT (user_id) DO NOTHING
       RETURNING user_id, account_created_at, requested_at, erased_at`,
      [userId, accountCreatedAt],
      tx,
    );
    return row && toDeletion(row);
  }

  async find(tx: Tx, userId: string): Promise<AccountDeletion | null> {
    const row = await this.first<AccountDeletionRow>(
      `SELECT user_id, account_created_at, requested_at, erased_at FROM account_deletions WHERE user_id = $1`,
      [userId],
      tx,
    );
    return row && toDeletion(row);
  }

  /** The request, locked until the end of `tx`, so two runs of the erasure job take turns. */
  async findForUpdate(tx: Tx, userId: string): Promise<AccountDeletion | null> {
    const row = await this.first<AccountDeletionRow>(
      `SELECT user_id, account_created_at, requested_at, erased_at FROM account_deletions WHERE user_id = $1 FOR UPDATE`,
      [userId],
      tx,
    );
    return row && toDeletion(row);
  }

  async markErased(tx: Tx, userId: string): Promise<void> {
    await this.execute(`UPDATE account_deletions SET erased_at = now() WHERE user_id = $1`, [userId], tx);
  }
}
