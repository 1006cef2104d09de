import { Inject, Injectable, Logger } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { Idempotency } from '../../common/idempotency/idempotency.service';
import { isId, newId } from '../../common/ids';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { ExportPendingDto, ExportResultDto } from './dto/privacy.dto';
import { ExportsRepository, SoulExport } from './exports.repository';
import { EXPORT_LIFETIME_MS, EXPORT_MEDIA, ExportFormat, isExportFormat } from './export-formats';
import { JobOutbox } from '../../infra/queue/job-outbox';
import { EXPORT_BUILD_JOB } from './exports.queue';

/** Scope of `Idempotency-Key` records of `POST /v1/soul/export`. */
export const EXPORT_SCOPE = 'soul.export';

/** Expired exports answer 410 for this long (content already dropped), then the row goes and the id answers 404. */
export const EXPIRED_EXPORT_RETENTION_DAYS = 7;

export type ExportDownload =
  { status: 'ready'; content: string; contentType: string; filename: string } | { status: 'pending'; body: ExportPendingDto };

/** Export requests, downloads and their retention. Building happens in the worker (SoulExportBuilder). */
@Injectable()
export class ExportsService {
  private readonly logger = new Logger(ExportsService.name);

  constructor(
    private readonly exports: ExportsRepository,
    private readonly idempotency: Idempotency,
    private readonly jobs: JobOutbox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Records the request and its build job (job outbox) in one transaction,
   * then relays the job at once so the build starts without waiting for the
   * relay to wake. If Redis is away the caller still gets its 202; the relay
   * moves the job when Redis is back.
   */
  async request(userId: string, format: ExportFormat, idempotencyKey?: string): Promise<ExportResultDto> {
    const { body, replayed } = await this.idempotency.run(userId, EXPORT_SCOPE, idempotencyKey, { format }, async (manager) => {
      const entity = await this.exports.insertPending(manager, {
        id: newId('exp'),
        userId,
        format,
        expiresAt: new Date(Date.now() + EXPORT_LIFETIME_MS),
      });
      await this.jobs.record(manager, { ...EXPORT_BUILD_JOB, id: entity.id, data: { exportId: entity.id } });
      return { status: 202, body: this.toResult(entity) };
    });
    const result = body as ExportResultDto;
    if (!replayed) await this.jobs.relayNow([result.id]);
    return result;
  }

  /**
   * What `GET /v1/exports/:id` answers. Only the owner sees an export; anyone
   * else, like an unknown id, gets 404 so ids cannot be probed.
   */
  async download(userId: string, exportId: string): Promise<ExportDownload> {
    const row = isId(exportId, 'exp') ? await this.exports.findForUser(userId, exportId) : null;
    if (!row) throw new ApiError('NOT_FOUND', `No export ${exportId}`);
    if (row.expiresAt.getTime() <= Date.now()) {
      throw new ApiError('GONE', `Export ${row.id} expired at ${row.expiresAt.toISOString()}; request a new one with POST /v1/soul/export`);
    }
    if (row.status === 'pending') return { status: 'pending', body: { id: row.id, status: 'pending' } };
    if (row.status === 'failed' || row.content === null) {
      throw new ApiError('INTERNAL_ERROR', `Export ${row.id} could not be built; request a new one with POST /v1/soul/export`);
    }
    const media = isExportFormat(row.format) ? EXPORT_MEDIA[row.format] : EXPORT_MEDIA.json;
    return {
      status: 'ready',
      content: row.content,
      contentType: row.contentType ?? media.contentType,
      filename: `soul-export-${row.id}.${media.extension}`,
    };
  }

  /** Records the final failure of a build (after BullMQ's last attempt). */
  async markFailed(exportId: string, error: string): Promise<void> {
    await this.exports.markFailed(exportId, error.slice(0, 2000));
  }

  /**
   * Retention: an expired export's content is personal data nobody can
   * download any more, so it is dropped at once; the row stays
   * `EXPIRED_EXPORT_RETENTION_DAYS` so its URL answers 410 rather than 404,
   * then it is deleted.
   */
  async purgeExpired(): Promise<{ exportContentsDropped: number; exportsPurged: number }> {
    const exportContentsDropped = await this.exports.dropExpiredContents();
    const exportsPurged = await this.exports.deleteExpiredBefore(EXPIRED_EXPORT_RETENTION_DAYS);
    if (exportContentsDropped || exportsPurged) this.logger.log({ exportContentsDropped, exportsPurged }, 'purged expired exports');
    return { exportContentsDropped, exportsPurged };
  }

  private toResult(entity: SoulExport): ExportResultDto {
    return {
      id: entity.id,
      status: entity.status,
      format: entity.format as ExportFormat,
      export_url: `${this.config.publicBaseUrl}/v1/exports/${entity.id}`,
      expires_at: entity.expiresAt.toISOString(),
    };
  }
}
