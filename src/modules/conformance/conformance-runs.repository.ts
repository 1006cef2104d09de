import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import { ConformanceReport, Verdict } from './conformance-runner';

/** Whose run it is: the version validated and the developer (and app) that may read it. */
export interface RunTarget {
  packageId: string;
  versionId: string;
  developerId: string;
  appId: string;
}

/** A conformance run as the area uses it (DTO-ready: `toRunDto` renders it). */
export interface RunRow {
  id: string;
  package_id: string;
  version_id: string;
  developer_id: string;
  app_id: string;
  full_run: boolean;
  status: string;
  score: number | null;
  passed: boolean | null;
  dimensions: ConformanceReport['dimensions'] | null;
  /** The rules (`RULES_VERSION` of @soul-service/rules) that scored the run; null before it is scored. */
  rules_version: string | null;
  error: string | null;
  created_at: Date;
  completed_at: Date | null;
}

const COLUMNS =
  'id, package_id, version_id, developer_id, app_id, full_run, status, score, passed, dimensions, rules_version, error, created_at, completed_at';

/** The one reader and writer of `conformance_runs`. */
@Injectable()
export class ConformanceRunsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** A queued full run (its job is recorded in the same transaction). */
  async insertQueued(id: string, target: RunTarget, tx?: Tx): Promise<RunRow> {
    const [row] = await this.rows<RunRow>(
      `INSERT INTO conformance_runs (id, package_id, version_id, developer_id, app_id, full_run) VALUES ($1, $2, $3, $4, $5, true) RETURNING ${COLUMNS}`,
      [id, target.packageId, target.versionId, target.developerId, target.appId],
      tx,
    );
    return row;
  }

  /** A run that already ran (local validation, or a full run at submission). */
  async insertCompleted(id: string, target: RunTarget, report: Verdict): Promise<RunRow> {
    const [row] = await this.rows<RunRow>(
      `INSERT INTO conformance_runs (id, package_id, version_id, developer_id, app_id, full_run, status, score, passed, dimensions, rules_version, completed_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'completed', $7, $8, $9, $10, now()) RETURNING ${COLUMNS}`,
      [
        id,
        target.packageId,
        target.versionId,
        target.developerId,
        target.appId,
        report.full,
        report.score,
        report.passed,
        JSON.stringify(report.dimensions),
        report.rulesVersion,
      ],
    );
    return row;
  }

  /** Moves a queued (or interrupted running) run to running; false when it is done. */
  async markRunning(id: string): Promise<boolean> {
    const { count } = await this.changed(
      `UPDATE conformance_runs SET status = 'running' WHERE id = $1 AND status IN ('queued', 'running')`,
      [id],
    );
    return count > 0;
  }

  async markCompleted(id: string, report: Verdict): Promise<void> {
    await this.execute(
      `UPDATE conformance_runs SET status = 'completed', score = $2, passed = $3, dimensions = $4, rules_version = $5, completed_at = now(), error = NULL
        WHERE id = $1`,
      [id, report.score, report.passed, JSON.stringify(report.dimensions), report.rulesVersion],
    );
  }

  async markFailed(id: string, error: string): Promise<void> {
    await this.execute(`UPDATE conformance_runs SET status = 'failed', error = $2, completed_at = now() WHERE id = $1`, [id, error]);
  }

  findById(id: string): Promise<RunRow | null> {
    return this.first<RunRow>(`SELECT ${COLUMNS} FROM conformance_runs WHERE id = $1`, [id]);
  }

  /** Runs of a version by a developer (and, when given, only the app's), newest first. */
  listForVersion(versionId: string, developerId: string, appId: string | null, limit: number): Promise<RunRow[]> {
    return this.rows<RunRow>(
      `SELECT ${COLUMNS} FROM conformance_runs
        WHERE version_id = $1 AND developer_id = $2 AND ($3::text IS NULL OR app_id = $3)
        ORDER BY created_at DESC LIMIT $4`,
      [versionId, developerId, appId, limit],
    );
  }

  /** The newest completed full run of a version younger than `maxAgeSeconds`. */
  freshFullRun(versionId: string, maxAgeSeconds: number): Promise<RunRow | null> {
    return this.first<RunRow>(
      `SELECT ${COLUMNS} FROM conformance_runs
        WHERE version_id = $1 AND full_run AND status = 'completed' AND completed_at > now() - make_interval(secs => $2)
        ORDER BY completed_at DESC LIMIT 1`,
      [versionId, maxAgeSeconds],
    );
  }
}
