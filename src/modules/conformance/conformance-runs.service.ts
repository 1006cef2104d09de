import { Injectable } from '@nestjs/common';
import { ProblemError } from '../../common/errors/problem-error';
import { isId, newId } from '../../common/ids';
import { PlatformPrincipal } from '../providers/auth/platform-principal';
import type { Tx } from '../../infra/database/sql-repository';
import { Verdict } from './conformance-runner';
import { ConformanceRunsRepository, RunRow, RunTarget } from './conformance-runs.repository';

export type { RunRow, RunTarget } from './conformance-runs.repository';

/** A run as the API shows it; `rulesVersion` names the rules (@soul-service/rules) that scored it. */
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
    rulesVersion: row.rules_version,
  };
}

/** Records of conformance runs (`conf_`), local or full. Versions are immutable, so a run stays true for its version. */
@Injectable()
export class ConformanceRuns {
  constructor(private readonly runs: ConformanceRunsRepository) {}

  /** A queued full run; inside the caller's transaction when given (its job commits with it). */
  async queue(target: RunTarget, manager?: Tx): Promise<RunRow> {
    return this.runs.insertQueued(newId('conf'), target, manager);
  }

  async recordCompleted(target: RunTarget, report: Verdict): Promise<RunRow> {
    return this.runs.insertCompleted(newId('conf'), target, report);
  }

  /** Moves a queued run to running; false when another worker has it or it is done. */
  async start(id: string): Promise<boolean> {
    return this.runs.markRunning(id);
  }

  async complete(id: string, report: Verdict): Promise<void> {
    await this.runs.markCompleted(id, report);
  }

  async fail(id: string, error: string): Promise<void> {
    await this.runs.markFailed(id, error.slice(0, 2000));
  }

  async get(principal: PlatformPrincipal, id: string): Promise<RunRow> {
    const row = isId(id, 'conf') ? await this.runs.findById(id) : null;
    if (!row) throw new ProblemError('not_found', `No conformance run ${id}`);
    const allowed = principal.kind === 'app' ? principal.appId === row.app_id : principal.developerId === row.developer_id;
    if (!allowed) throw new ProblemError('insufficient_scope', `Conformance run ${id} belongs to another developer`);
    return row;
  }

  /** Runs of a version, newest first; only the caller's own (an app sees its app's runs, a developer all of theirs). */
  async listForVersion(principal: PlatformPrincipal, versionId: string, limit: number): Promise<RunRow[]> {
    return this.runs.listForVersion(versionId, principal.developerId, principal.kind === 'app' ? principal.appId : null, limit);
  }

  async find(id: string): Promise<RunRow | null> {
    return this.runs.findById(id);
  }

  /** A completed full run of this version younger than `maxAgeSeconds`, for submission to reuse. */
  async freshFullRun(versionId: string, maxAgeSeconds: number): Promise<RunRow | null> {
    return this.runs.freshFullRun(versionId, maxAgeSeconds);
  }
}
