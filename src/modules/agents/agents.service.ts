import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Job } from 'bullmq';
import { Repository } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { Idempotency } from '../../common/idempotency/idempotency.service';
import { isId, newId } from '../../common/ids';
import { CONVERSATION_ACTIONS, parseAgentRequest } from './actions/agent-action-params';
import { ConversationReader } from './actions/conversation-reader';
import { AgentsQueue, RunAgentActionJob, RunAgentActionResult } from './agents.queue';
import { AgentActionDto, AgentActionResultDto, ExecuteAgentActionDto } from './dto/agents.dto';
import { AgentActionEntity } from './entities/agent-action.entity';

/** How long `POST /v1/agents/execute` waits for the worker before answering 202. */
export const EXECUTE_WAIT_MS = 2_000;
/** A queued action older than this with no live job lost its enqueue (Redis was away). */
export const STALE_AFTER_MS = 60_000;
const REQUEUE_BATCH = 500;
/** BullMQ holds commands while Redis is away; a request does not wait for it longer than this. */
const ENQUEUE_TIMEOUT_MS = 1_500;

export interface ExecuteOutcome {
  /** 200 when finished (completed or failed), 202 while queued or running. */
  httpStatus: 200 | 202;
  body: AgentActionResultDto;
  headers: Record<string, string>;
}

export function toAgentActionDto(row: AgentActionEntity): AgentActionDto {
  return {
    id: row.id,
    action: row.action,
    status: row.status,
    result: row.result,
    error: row.error,
    created_at: row.createdAt.toISOString(),
    completed_at: row.completedAt?.toISOString() ?? null,
  };
}

function toResultDto(row: AgentActionEntity): AgentActionResultDto {
  if (row.status === 'completed') return { id: row.id, status: row.status, result: row.result ?? {} };
  if (row.status === 'failed') return { id: row.id, status: row.status, error: row.error ?? 'The action failed' };
  return { id: row.id, status: row.status };
}

/** Agent actions: recorded, queued for the worker, briefly awaited, readable afterwards. */
@Injectable()
export class AgentsService {
  private readonly logger = new Logger(AgentsService.name);

  constructor(
    @InjectRepository(AgentActionEntity) private readonly actions: Repository<AgentActionEntity>,
    private readonly idempotency: Idempotency,
    private readonly queue: AgentsQueue,
    private readonly conversations: ConversationReader,
  ) {}

  /**
   * Records the action and its idempotency key in one transaction, enqueues it
   * once committed, then waits up to EXECUTE_WAIT_MS for the worker. A replay
   * (same key, same body) answers with the current state of the first action.
   */
  async execute(userId: string, body: ExecuteAgentActionDto, idempotencyKey?: string): Promise<ExecuteOutcome> {
    const request = await parseAgentRequest(body.action, body.params);
    const stored = await this.idempotency.run(userId, 'agents.execute', idempotencyKey, body, async (manager) => {
      if (CONVERSATION_ACTIONS.includes(request.action)) {
        await this.conversations.assertContact(userId, request.params.contact_id as string);
      }
      const id = newId('act');
      await manager.query(`INSERT INTO agent_actions (id, user_id, action, params, status) VALUES ($1, $2, $3, $4::jsonb, 'queued')`, [
        id,
        userId,
        request.action,
        JSON.stringify(request.params),
      ]);
      return { status: 202, body: { id, status: 'queued' } };
    });
    const id = (stored.body as { id: string }).id;

    let job: Job<RunAgentActionJob, RunAgentActionResult> | string | null = id;
    if (!stored.replayed) {
      job = await this.enqueue(id);
    } else {
      const current = await this.actions.findOne({ where: { id, userId } });
      // A replay retries a lost enqueue; the job id makes it a no-op when the job exists.
      if (current?.status === 'queued') job = (await this.enqueue(id)) ?? id;
      if (current?.status === 'completed' || current?.status === 'failed') job = null;
    }
    if (job !== null) await this.queue.waitForFinish(job, EXECUTE_WAIT_MS);

    const row = await this.actions.findOne({ where: { id, userId } });
    // Erased meanwhile (the soul was deleted and the actions with it).
    if (!row) throw new ApiError('NOT_FOUND', `Agent action ${id} no longer exists`);
    const finished = row.status === 'completed' || row.status === 'failed';
    const headers: Record<string, string> = stored.replayed ? { 'Idempotent-Replayed': 'true' } : {};
    if (!finished) headers.Location = `/v1/agents/actions/${row.id}`;
    return { httpStatus: finished ? 200 : 202, body: toResultDto(row), headers };
  }

  async get(userId: string, id: string): Promise<AgentActionDto> {
    const row = isId(id, 'act') ? await this.actions.findOne({ where: { id, userId } }) : null;
    if (!row) throw new ApiError('NOT_FOUND', `No agent action ${id}`);
    return toAgentActionDto(row);
  }

  /**
   * Re-enqueues actions that were recorded but whose job never reached the
   * queue (or was lost): unfinished for over a minute and without a live job.
   * Called periodically by the retention job; returns how many were re-enqueued.
   */
  async requeueStale(): Promise<number> {
    const stale = await this.actions
      .createQueryBuilder('a')
      .select('a.id', 'id')
      .where(`a.status IN ('queued', 'running')`)
      .andWhere(`a.created_at < now() - make_interval(secs => :secs)`, { secs: STALE_AFTER_MS / 1000 })
      .orderBy('a.created_at')
      .limit(REQUEUE_BATCH)
      .getRawMany<{ id: string }>();
    let requeued = 0;
    for (const { id } of stale) {
      if (await this.queue.hasLiveJob(id)) continue;
      await this.queue.replace(id);
      requeued += 1;
    }
    if (requeued > 0) this.logger.warn({ requeued }, 're-enqueued agent actions that had no job');
    return requeued;
  }

  /** Enqueues after commit. A failure leaves the row queued for `requeueStale` and is not the client's problem. */
  private async enqueue(id: string): Promise<Job<RunAgentActionJob, RunAgentActionResult> | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`enqueue took longer than ${ENQUEUE_TIMEOUT_MS} ms`)), ENQUEUE_TIMEOUT_MS);
    });
    const adding = this.queue.enqueue(id);
    try {
      return await Promise.race([adding, timeout]);
    } catch (error) {
      adding.catch(() => undefined);
      this.logger.warn({ actionId: id, err: error }, 'could not enqueue agent action; it stays queued for the stale sweep');
      return null;
    } finally {
      clearTimeout(timer);
    }
  }
}
