import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { UnrecoverableError } from 'bullmq';
import { DataSource } from 'typeorm';
import { UsersService } from '../auth/users.service';
import { SoulService, toSoulDto } from '../soul/soul.service';
import { ExportsRepository } from './exports.repository';
import { ExportProfile, renderJson, renderMarkdown, SoulExportDocument } from './export-document';
import { EXPORT_FORMAT_VERSION, EXPORT_MEDIA, isExportFormat } from './export-formats';
import { BuildExportResult } from './exports.queue';
import { PersonalDataSections } from './personal-data-sections';

/** Builds a requested export (worker role): gathers every section, renders the format, stores the result. */
@Injectable()
export class SoulExportBuilder {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly users: UsersService,
    private readonly souls: SoulService,
    private readonly sections: PersonalDataSections,
    private readonly exports: ExportsRepository,
  ) {}

  /**
   * Idempotent: only a `pending`, unexpired export is built, and the result is
   * stored only if the row is still `pending` (it may have been deleted with
   * the soul record meanwhile), so a repeated job changes nothing.
   */
  async build(exportId: string): Promise<BuildExportResult> {
    const row = await this.exports.findById(exportId);
    if (!row) return { exportId, outcome: 'skipped', reason: 'the export no longer exists' };
    if (row.status !== 'pending') return { exportId, outcome: 'skipped', reason: `the export is already ${row.status}` };
    if (row.expiresAt.getTime() <= Date.now()) return { exportId, outcome: 'skipped', reason: 'the export expired before it was built' };
    if (!isExportFormat(row.format)) throw new UnrecoverableError(`unknown export format "${row.format}"`);

    const document = await this.collect(row.userId);
    const content = row.format === 'markdown' ? renderMarkdown(document, row.id) : renderJson(document);
    const stored = await this.exports.storeBuilt(exportId, content, EXPORT_MEDIA[row.format].contentType);
    if (!stored) return { exportId, outcome: 'skipped', reason: 'the export changed while it was built' };
    return { exportId, outcome: 'built', bytes: Buffer.byteLength(content) };
  }

  /**
   * Reads the soul record and every section in one REPEATABLE READ, read-only
   * transaction: all of them see the same snapshot, so the export never shows
   * a message whose contact is missing because the two were read a moment
   * apart. `exported_at` is the snapshot's time.
   */
  async collect(userId: string): Promise<SoulExportDocument> {
    const user = await this.users.profile(userId);
    if (!user) throw new UnrecoverableError('the user no longer exists');
    const profile: ExportProfile = {
      id: user.id,
      name: user.name,
      email: user.email,
      created_at: user.createdAt.toISOString(),
      tier: user.tier,
    };

    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const now = await this.exports.readOnlySnapshot(manager);
      const soul = await this.souls.findByUser(userId, manager);
      const document: SoulExportDocument = {
        exported_at: now.toISOString(),
        format_version: EXPORT_FORMAT_VERSION,
        profile,
        soul: soul ? toSoulDto(soul) : null,
      };
      for (const source of this.sections.all()) document[source.section] = await source.exportFor(userId, manager);
      return document;
    });
  }
}
