import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** How long dispatched outbox rows are kept for inspection before they are purged. */
export const DISPATCHED_EVENT_RETENTION_DAYS = 7;
const DELETE_BATCH = 5_000;

/** Deletes rows whose useful life is over. Later areas add their own expired rows here. */
@Injectable()
export class RetentionService {
  private readonly logger = new Logger(RetentionService.name);

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async purgeExpired(): Promise<{ eventsPurged: number }> {
    let eventsPurged = 0;
    // Small batches keep each statement short so the purge never holds long locks.
    for (;;) {
      const result: [unknown[], number] = await this.dataSource.query(
        `DELETE FROM events WHERE id IN (
           SELECT id FROM events
            WHERE dispatched_at IS NOT NULL AND dispatched_at < now() - make_interval(days => $1)
            LIMIT $2)`,
        [DISPATCHED_EVENT_RETENTION_DAYS, DELETE_BATCH],
      );
      eventsPurged += result[1];
      if (result[1] < DELETE_BATCH) break;
    }
    this.logger.log({ eventsPurged }, 'purged expired rows');
    return { eventsPurged };
  }
}
