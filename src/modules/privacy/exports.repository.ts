import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { eachBatch } from '../../infra/database/in-batches';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import { ExportEntity, ExportStatus } from './entities/export.entity';

/** One requested copy of a user's personal data. */
export interface SoulExport {
  id: string;
  userId: string;
  format: string;
  status: ExportStatus;
  /** The rendered document; null until built, and again once the retention purge dropped it. */
  content: string | null;
  contentType: string | null;
  error: string | null;
  createdAt: Date;
  completedAt: Date | null;
  expiresAt: Date;
}

/** The `exports` table. */
@Injectable()
export class ExportsRepository extends SqlRepository {
  constructor(
    @InjectDataSource() dataSource: DataSource,
    @InjectRepository(ExportEntity) private readonly exports: Repository<ExportEntity>,
  ) {
    super(dataSource);
  }

  /** A new `pending` export, inside the transaction that records its build job. */
  async insertPending(tx: Tx, request: { id: string; userId: string; format: string; expiresAt: Date }): Promise<SoulExport> {
    const entity = tx.create(ExportEntity, { ...request, status: 'pending' });
    await tx.insert(ExportEntity, entity);
    return entity;
  }

  findById(id: string): Promise<SoulExport | null> {
    return this.exports.findOne({ where: { id } });
  }

  findForUser(userId: string, id: string): Promise<SoulExport | null> {
    return this.exports.findOne({ where: { id, userId } });
  }

  /** Stores the built document if the export is still `pending`; false when it changed (or went) meanwhile. */
  async storeBuilt(id: string, content: string, contentType: string): Promise<boolean> {
    const stored = await this.exports.update(
      { id, status: 'pending' },
      { status: 'ready', content, contentType, completedAt: new Date(), error: null },
    );
    return Boolean(stored.affected);
  }

  /** Settles a still `pending` export as failed. */
  async markFailed(id: string, error: string): Promise<void> {
    await this.exports.update({ id, status: 'pending' }, { status: 'failed', error, completedAt: new Date() });
  }

  /** How many exports of the user were deleted. */
  async deleteForUser(tx: Tx, userId: string): Promise<number> {
    return (await tx.delete(ExportEntity, { userId })).affected ?? 0;
  }

  /** Drops the content of expired exports, in batches; how many were dropped. */
  dropExpiredContents(): Promise<number> {
    return eachBatch((limit) =>
      this.changed(
        `UPDATE exports SET content = NULL WHERE id IN (
         SELECT id FROM exports WHERE expires_at <= now() AND content IS NOT NULL LIMIT $1)`,
        [limit],
      ).then((r) => r.count),
    );
  }

  /** Deletes exports expired more than `retentionDays` ago, in batches; how many went. */
  deleteExpiredBefore(retentionDays: number): Promise<number> {
    return eachBatch((limit) =>
      this.changed(
        `DELETE FROM exports WHERE id IN (
         SELECT id FROM exports WHERE expires_at < now() - make_interval(days => $2) LIMIT $1)`,
        [limit, retentionDays],
      ).then((r) => r.count),
    );
  }

  /**
   * Makes the caller's (REPEATABLE READ) transaction read-only and answers its
   * snapshot's time: what an export calls `exported_at`.
   */
  async readOnlySnapshot(tx: Tx): Promise<Date> {
    await this.execute('SET TRANSACTION READ ONLY', [], tx);
    const [{ now }] = await this.rows<{ now: Date }>('SELECT now() AS now', [], tx);
    return now;
  }
}
