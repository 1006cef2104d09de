import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ProblemError } from '../../common/errors/problem-error';
import { isId, newId } from '../../common/ids';
import { PlatformPrincipal } from '../providers/auth/platform-principal';
import { ConformanceReport } from './conformance-runner';

export interface RunTarget {
  packageId: string;
  versionId: string;
  developerId: string;
  appId: string;
}

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
  error: string | null;
  created_at: Date;
  completed_at: Date | null;
}

const COLUMNS =
  'id, package_id, version_id, developer_id, app_id, full_run, status, score, passed, dimensions, error, created_at, completed_at';

export function toRunDto(row: RunRow) {
  return {
    id: row.id,
    packageId: row.package_id,
    versionId: row.version_id,
    full: row.full_run,
    status: row.status,
    score: row.score,
    passed: row.passed,
    dimensions: row.dimensions,
    error: row.error,
    createdAt: row.created_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
  };
}

/** Records of conformance runs (`conf_`), local or full. Versions are immutable, so a run stays true for its version. */
@Injectable()
export class ConformanceRuns {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async queue(target: RunTarget, manager: EntityManager = this.dataSource.manager): Promise<RunRow> {
    const [row]: RunRow[] = await manager.query(
      `INSERT INTO conformance_runs (id, package_id, version_id, developer_id, app_id, full_run) VALUES ($1, $2, $3, $4, $5, true) RETURNING ${COLUMNS}`,
      [newId('conf'), target.packageId, target.versionId, target.developerId, target.appId],
    );
    return row;
  }

  async recordCompleted(target: RunTarget, report: ConformanceReport): Promise<RunRow> {
    const [row]: RunRow[] = await this.dataSource.query(
      `INSERT INTO conformance_runs (id, package_id, version_id, developer_id, app_id, full_run, status, score, passed, dimensions, completed_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'completed', $7, $8, $9, now()) RETURNING ${COLUMNS}`,
      [
        newId('conf'),
        target.packageId,
        target.versionId,
        target.developerId,
        target.appId,
        report.full,
        report.score,
        report.passed,
        JSON.stringify(report.dimensions),
      ],
    );
    return row;
  }

  /** Moves a queued run to running; false when another worker has it or it is done. */
  async start(id: string): Promise<boolean> {
    const [, count]: [unknown, number] = await this.dataSource.query(
      `UPDATE conformance_runs SET status = 'running' WHERE id = $1 AND status IN ('queued', 'running')`,
      [id],
    );
    return count > 0;
  }

  async complete(id: string, report: ConformanceReport): Promise<void> {
    await this.dataSource.query(
      `UPDATE conformance_runs SET status = 'completed', score = $2, passed = $3, dimensions = $4, completed_at = now(), error = NULL WHERE id = $1`,
      [id, report.score, report.passed, JSON.stringify(report.dimensions)],
    );
  }

  async fail(id: string, error: string): Promise<void> {
    await this.dataSource.query(`UPDATE conformance_runs SET status = 'failed', error = $2, completed_at = now() WHERE id = $1`, [
      id,
      error.slice(0, 2000),
    ]);
  }

  async get(principal: PlatformPrincipal, id: string): Promise<RunRow> {
    const [row]: RunRow[] = isId(id, 'conf')
      ? await this.dataSource.query(`SELECT ${COLUMNS} FROM conformance_runs WHERE id = $1`, [id])
      : [];
    if (!row) throw new ProblemError('not_found', `No conformance run ${id}`);
    const allowed = principal.kind === 'app' ? principal.appId === row.app_id : principal.developerId === row.developer_id;
    if (!allowed) throw new ProblemError('insufficient_scope', `Conformance run ${id} belongs to another developer`);
    return row;
  }

  /** Runs of a version, newest first; only the caller's own (an app sees its app's runs, a developer all of theirs). */
  async listForVersion(principal: PlatformPrincipal, versionId: string, limit: number): Promise<RunRow[]> {
    return this.dataSource.query(
      `SELECT ${COLUMNS} FROM conformance_runs
        WHERE version_id = $1 AND developer_id = $2 AND ($3::text IS NULL OR app_id = $3)
        ORDER BY created_at DESC LIMIT $4`,
      [versionId, principal.developerId, principal.kind === 'app' ? principal.appId : null, limit],
    );
  }

  async find(id: string): Promise<RunRow | null> {
    const [row]: RunRow[] = await this.dataSource.query(`SELECT ${COLUMNS} FROM conformance_runs WHERE id = $1`, [id]);
    return row ?? null;
  }

  /** A completed full run of this version younger than `maxAgeSeconds`, for submission to reuse. */
  async freshFullRun(versionId: string, maxAgeSeconds: number): Promise<RunRow | null> {
    const [row]: RunRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM conformance_runs
        WHERE version_id = $1 AND full_run AND status = 'completed' AND completed_at > now() - make_interval(secs => $2)
        ORDER BY completed_at DESC LIMIT 1`,
      [versionId, maxAgeSeconds],
    );
    return row ?? null;
  }
}
