import { Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { Idempotency } from '../../common/idempotency/idempotency.service';
import { isId, newId } from '../../common/ids';
import { CONVERSATION_ACTIONS, parseAgentRequest } from './actions/agent-action-params';
import { ConversationReader } from './actions/conversation-reader';
import { JobOutbox } from '../../infra/queue/job-outbox';
import { AGENT_RUN_JOB, AgentsQueue } from './agents.queue';
import { AgentActionDto, AgentActionResultDto, ExecuteAgentActionDto } from './dto/agents.dto';
import { AgentAction, AgentActionsRepository } from './agent-actions.repository';

/** How long `POST /v1/agents/execute` waits for the worker before answering 202. */
export const EXECUTE_WAIT_MS = 2_000;

export interface ExecuteOutcome {
  action: AgentActionResultDto;
  /** Completed or failed; false while queued or running (the client polls `GET /v1/agents/actions/:id`). */
  finished: boolean;
  /** True when an earlier request with the same Idempotency-Key recorded this action. */
  replayed: boolean;
}

export function toAgentActionDto(row: AgentAction): AgentActionDto {
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

function toResultDto(row: AgentAction): AgentActionResultDto {
  if (row.status === 'completed') return { id: row.id, status: row.status, result: row.result ?? {} };
  if (row.status === 'failed') return { id: row.id, status: row.status, error: row.error ?? 'The action failed' };
  return { id: row.id, status: row.status };
}

/** Agent actions: recorded, queued for the worker, briefly awaited, readable afterwards. */
@Injectable()
export class AgentsService {
  constructor(
    private readonly actions: AgentActionsRepository,
    private readonly idempotency: Idempotency,
    private readonly queue: AgentsQueue,
    private readonly conversations: ConversationReader,
    private readonly jobs: JobOutbox,
  ) {}

  /**
   * Records the action, its job and its idempotency key in one transaction,
   * relays the job at once, then waits up to EXECUTE_WAIT_MS for the worker. A replay
   * (same key, same body) answers with the current state of the first action.
   */
  async execute(userId: string, body: ExecuteAgentActionDto, idempotencyKey?: string): Promise<ExecuteOutcome> {
    const request = await parseAgentRequest(body.action, body.params);
    const stored = await this.idempotency.run(userId, 'agents.execute', idempotencyKey, body, async (manager) => {
      if (CONVERSATION_ACTIONS.includes(request.action)) {
        await this.conversations.assertContact(userId, request.params.contact_id as string);
      }
      const id = newId('act');
      await this.actions.insertQueued(manager, { id, userId, action: request.action, params: request.params });
      await this.jobs.record(manager, { ...AGENT_RUN_JOB, id, data: { actionId: id } });
      return { status: 202, body: { id, status: 'queued' } };
    });
    const id = (stored.body as { id: string }).id;

    // The job was recorded with the action; relay it now rather than wait for the relay to wake, then wait for the worker.
    if (!stored.replayed) await this.jobs.relayNow([id]);
    const current = stored.replayed ? await this.actions.findForUser(userId, id) : null;
    if (!stored.replayed || current?.status === 'queued' || current?.status === 'running') {
      await this.queue.waitForFinish(id, EXECUTE_WAIT_MS);
    }

    const row = await this.actions.findForUser(userId, id);
    // Erased meanwhile (the soul was deleted and the actions with it).
    if (!row) throw new ApiError('NOT_FOUND', `Agent action ${id} no longer exists`);
    const finished = row.status === 'completed' || row.status === 'failed';
    return { action: toResultDto(row), finished, replayed: stored.replayed };
  }

  async get(userId: string, id: string): Promise<AgentActionDto> {
    const row = isId(id, 'act') ? await this.actions.findForUser(userId, id) : null;
    if (!row) throw new ApiError('NOT_FOUND', `No agent action ${id}`);
    return toAgentActionDto(row);
  }
}
