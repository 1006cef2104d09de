import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { KEYSET_AT_SQL, KeysetPosition } from '../../common/pagination/keyset-cursor';
import { SqlRepository } from '../../infra/database/sql-repository';

/** A `capability_executions` row as the execution log shows it. */
export interface ExecutionLogRow {
  id: string;
  install_id: string;
  user_id: string;
  app_id: string;
  package_id: string;
  capability: string;
  mode: string;
  trigger: string;
  outcome: string;
  error_code: string | null;
  error_message: string | null;
  attempts: number;
  retries_exhausted: boolean;
  phases: Record<string, number>;
  duration_ms: number;
  created_at: Date;
  /** `created_at` to the microsecond, for the next page's cursor. */
  cursor_at: string;
}

/** Filters of the execution log (null: any). */
export interface ExecutionLogFilter {
  packageId: string | null;
  capability: string | null;
  installId: string | null;
  outcome: string | null;
  errorCode: string | null;
  since: string | null;
  until: string | null;
  after: KeysetPosition | null;
}

const COLUMNS = `id, install_id, user_id, app_id, package_id, capability, mode, trigger, outcome, error_code, error_message, attempts,
                 retries_exhausted, phases, duration_ms, created_at, ${KEYSET_AT_SQL('created_at')} AS cursor_at`;

/**
 * Reads `capability_executions` for the providers' execution log. Apart from
 * `ExecutionTracesRepository`, which writes the traces on the execution path
 * and is kept to that one statement; nothing here touches the write path.
 */
@Injectable()
export class ExecutionLogRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /**
   * A page of the apps' traces, newest first; `take` rows at most. Each app's newest rows come from its own ordered
   * scan of `capability_executions_app_idx` (a lateral join per app), then the apps' rows are merged: an
   * `app_id = ANY(…)` condition would read every row of the apps and sort them. Statements are planned with their
   * values, so the filters left null drop out and the cursor becomes a bound of the index scan.
   */
  async page(appIds: string[], filter: ExecutionLogFilter, take: number): Promise<ExecutionLogRow[]> {
    return this.rows<ExecutionLogRow>(
      `SELECT t.* FROM unnest($1::text[]) AS a(app_id)
       CROSS JOIN LATERAL (
         SELECT ${COLUMNS} FROM capability_executions
          WHERE app_id = a.app_id
            AND ($2::text IS NULL OR package_id = $2)
            AND ($3::text IS NULL OR capability = $3)
            AND ($4::text IS NULL OR install_id = $4)
            AND ($5::text IS NULL OR outcome = $5)
            AND ($6::text IS NULL OR error_code = $6)
            AND ($7::timestamptz IS NULL OR created_at >= $7)
            AND ($8::timestamptz IS NULL OR created_at < $8)
            AND ($9::timestamptz IS NULL OR (created_at, id) < ($9, $10))
          ORDER BY created_at DESC, id DESC
          LIMIT $11
       ) t
       ORDER BY t.created_at DESC, t.id DESC
       LIMIT $11`,
      [
        appIds,
        filter.packageId,
        filter.capability,
        filter.installId,
        filter.outcome,
        filter.errorCode,
        filter.since,
        filter.until,
        filter.after?.at ?? null,
        filter.after?.id ?? null,
        take,
      ],
    );
  }

  async findForApps(requestId: string, appIds: string[]): Promise<ExecutionLogRow | null> {
    return this.first<ExecutionLogRow>(`SELECT ${COLUMNS} FROM capability_executions WHERE id = $1 AND app_id = ANY($2::text[])`, [
      requestId,
      appIds,
    ]);
  }
}
