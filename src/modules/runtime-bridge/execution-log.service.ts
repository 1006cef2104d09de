import { Injectable } from '@nestjs/common';
import { ProblemError } from '../../common/errors/problem-error';
import { isId } from '../../common/ids';
import { decodeKeyset, keysetPage } from '../../common/pagination/keyset-cursor';
import { DEFAULT_PAGE_LIMIT } from '../../common/pagination/page-query';
import { AppsService } from '../providers/apps.service';
import { PlatformPrincipal } from '../providers/auth/platform-principal';
import { visibleAppIds } from '../providers/visible-apps';
import { ExecutionDetailDto, ExecutionLogQuery, ExecutionPageDto, ExecutionPhaseDto, ExecutionSummaryDto } from './dto/execution-log.dto';
import { ExecutionLogRepository, ExecutionLogRow } from './execution-log.repository';
import { PHASES } from './execution-traces.service';

/**
 * The providers' execution log (as Stripe's request logs): the traces of
 * their apps' capability calls, found by request id, the id the runtime
 * received, so a user's complaint leads to its phases, attempts and error.
 * Traces are kept `TRACE_RETENTION_DAYS`.
 */
@Injectable()
export class ExecutionLog {
  constructor(
    private readonly log: ExecutionLogRepository,
    private readonly apps: AppsService,
  ) {}

  async list(principal: PlatformPrincipal, query: ExecutionLogQuery): Promise<ExecutionPageDto> {
    const appIds = await visibleAppIds(this.apps, principal, query.app_id);
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const rows = await this.log.page(
      appIds,
      {
        packageId: query.package_id ?? null,
        capability: query.capability ?? null,
        installId: query.install_id ?? null,
        outcome: query.outcome ?? null,
        errorCode: query.error_code ?? null,
        since: query.since ?? null,
        until: query.until ?? null,
        after: query.cursor ? decodeKeyset(query.cursor) : null,
      },
      limit + 1,
    );
    const { page, nextCursor } = keysetPage(rows, limit);
    return { executions: page.map(toSummary), next_cursor: nextCursor };
  }

  /** One trace of the principal's apps; another developer's request id answers 404 like an unknown one. */
  async get(principal: PlatformPrincipal, requestId: string): Promise<ExecutionDetailDto> {
    const row = isId(requestId, 'req') ? await this.log.findForApps(requestId, await visibleAppIds(this.apps, principal)) : null;
    if (!row) throw new ProblemError('not_found', `No execution ${requestId}`);
    return {
      ...toSummary(row),
      user_id: row.user_id,
      retries: Math.max(0, row.attempts - 1),
      phases: timeline(row.phases),
      error: row.error_code ? { code: row.error_code, message: row.error_message ?? '', retries_exhausted: row.retries_exhausted } : null,
    };
  }
}

function toSummary(row: ExecutionLogRow): ExecutionSummaryDto {
  return {
    request_id: row.id,
    app_id: row.app_id,
    package_id: row.package_id,
    install_id: row.install_id,
    capability: row.capability,
    mode: row.mode,
    trigger: row.trigger,
    outcome: row.outcome,
    error_code: row.error_code,
    attempts: row.attempts,
    duration_ms: row.duration_ms,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * The trace stores each phase's duration; the phases run one after another,
 * so each begins where the ones before it ended. A phase the execution did
 * not reach (it failed earlier, or a cache hit skipped the call) is left out.
 */
function timeline(phases: Record<string, number>): ExecutionPhaseDto[] {
  let offset = 0;
  return PHASES.filter((name) => typeof phases[name] === 'number').map((name) => {
    const phase = { name, offset_ms: round(offset), duration_ms: phases[name] };
    offset += phases[name];
    return phase;
  });
}

const round = (ms: number) => Math.round(ms * 100) / 100;
