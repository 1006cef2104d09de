import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Logger } from '@nestjs/common';
import { Job, UnrecoverableError } from 'bullmq';
import { QUEUES, STALLED_CHECK_MS } from '../../infra/queue/queues';
import { AgentActionRejected } from './actions/agent-action.error';
import { AgentActionRunner } from './actions/agent-action-runner';
import { AGENT_JOBS, RunAgentActionJob, RunAgentActionResult } from './agents.queue';
import { AgentActionsRepository } from './agent-actions.repository';

/** Shown instead of an unexpected error's own message, which may describe internals. */
const GENERIC_FAILURE = 'The action could not be completed; try again later';

/**
 * Consumer of the `agents` queue (worker role only). Idempotent: an action that
 * is already completed or failed is left alone, and every state change is
 * conditional on the action still being unfinished, so a duplicate or stalled
 * job can never overwrite a result.
 */
@Processor(QUEUES.agents, { concurrency: 8, stalledInterval: STALLED_CHECK_MS })
export class AgentsProcessor extends WorkerHost {
  private readonly logger = new Logger(AgentsProcessor.name);

  constructor(
    private readonly actions: AgentActionsRepository,
    private readonly runner: AgentActionRunner,
  ) {
    super();
  }

  async process(job: Job<RunAgentActionJob, RunAgentActionResult>): Promise<RunAgentActionResult> {
    if (job.name !== AGENT_JOBS.run) throw new UnrecoverableError(`unknown agents job "${job.name}"`);
    const action = await this.actions.findById(job.data.actionId);
    // Missing: erased with the soul record after it was queued.
    if (!action || action.status === 'completed' || action.status === 'failed') return { outcome: 'skipped' };
    if (!(await this.actions.transition(action.id, 'running'))) return { outcome: 'skipped' };

    let result: Record<string, unknown>;
    try {
      result = await this.runner.run(action);
    } catch (error) {
      const rejected = error instanceof AgentActionRejected;
      if (!rejected && job.attemptsMade + 1 < (job.opts.attempts ?? 1)) {
        // BullMQ retries it after a backoff; until then it waits again.
        await this.actions.transition(action.id, 'queued');
        throw error;
      }
      if (!rejected) this.logger.error({ err: error, actionId: action.id, action: action.action }, 'agent action failed');
      const message = rejected ? error.message : GENERIC_FAILURE;
      await this.actions.transition(action.id, 'failed', { error: message });
      throw new UnrecoverableError(message);
    }
    await this.actions.transition(action.id, 'completed', { result });
    return { outcome: 'completed' };
  }
}
