import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Job, JobState, Queue, QueueEvents } from 'bullmq';
import { QUEUES } from '../../infra/queue/queues';

export const AGENT_JOBS = {
  run: 'run-action',
} as const;

export interface RunAgentActionJob {
  actionId: string;
}

export interface RunAgentActionResult {
  /** `skipped`: the action was already finished, or erased with the soul. */
  outcome: 'completed' | 'failed' | 'skipped';
}

/** Job states in which a worker will still run the job. */
const LIVE_STATES: ReadonlyArray<JobState | 'unknown'> = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'];

/**
 * Producer of the `agents` queue. One job per action, keyed by the action id,
 * so a duplicate enqueue (a replayed request, the stale-action sweep) never
 * runs an action twice.
 */
@Injectable()
export class AgentsQueue implements OnApplicationShutdown {
  private readonly logger = new Logger(AgentsQueue.name);
  private events: Promise<QueueEvents> | null = null;

  constructor(@InjectQueue(QUEUES.agents) private readonly queue: Queue<RunAgentActionJob, RunAgentActionResult>) {
    // Every request waiting for its job adds a 'closing' listener to the queue; many may wait at once.
    this.queue.setMaxListeners(0);
  }

  async enqueue(actionId: string): Promise<Job<RunAgentActionJob, RunAgentActionResult>> {
    return this.queue.add(AGENT_JOBS.run, { actionId }, { jobId: actionId });
  }

  /** Whether a worker will still pick up (or is running) the job of this action. */
  async hasLiveJob(actionId: string): Promise<boolean> {
    return LIVE_STATES.includes(await this.queue.getJobState(actionId));
  }

  /**
   * Enqueues the action again. A finished job under the same id (its row says
   * otherwise, so the worker lost track) is removed first, since BullMQ ignores
   * an add whose job id exists.
   */
  async replace(actionId: string): Promise<void> {
    const state = await this.queue.getJobState(actionId);
    if (state === 'completed' || state === 'failed') await this.queue.remove(actionId);
    await this.enqueue(actionId);
  }

  /**
   * Waits until the job finishes or `timeoutMs` passes, whichever comes first.
   * Never throws: a timeout, a failed job or a Redis problem all end the wait,
   * and the caller reads the action's row for the truth.
   */
  async waitForFinish(job: Job<RunAgentActionJob, RunAgentActionResult> | string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    const finished = (async () => {
      const events = await this.queueEvents();
      const found = typeof job === 'string' ? await Job.fromId<RunAgentActionJob, RunAgentActionResult>(this.queue, job) : job;
      const left = deadline - Date.now();
      if (found && left > 0) await found.waitUntilFinished(events, left);
    })().catch(() => undefined);
    try {
      await Promise.race([finished, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** One `QueueEvents` per process (a dedicated blocking Redis connection), opened on first use. */
  private queueEvents(): Promise<QueueEvents> {
    this.events ??= (async () => {
      const events = new QueueEvents(this.queue.name, { connection: this.queue.opts.connection, prefix: this.queue.opts.prefix });
      events.on('error', (error) => this.logger.warn(`agents queue events: ${error.message}`));
      await events.waitUntilReady();
      return events;
    })().catch((error: unknown) => {
      this.events = null;
      throw error;
    });
    return this.events;
  }

  async onApplicationShutdown(): Promise<void> {
    const events = await this.events?.catch(() => null);
    this.events = null;
    await events?.close();
  }
}
