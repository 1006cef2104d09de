import { InjectQueue } from '@nestjs/bullmq';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Job, Queue, QueueEvents } from 'bullmq';
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

/** One job per action, job id = action id, recorded in the job outbox with the action row. */
export const AGENT_RUN_JOB = { queue: QUEUES.agents, name: AGENT_JOBS.run } as const;

/** Waits on the `agents` queue's jobs (they are recorded in the job outbox with their action). */
@Injectable()
export class AgentsQueue implements OnApplicationShutdown {
  private readonly logger = new Logger(AgentsQueue.name);
  private events: Promise<QueueEvents> | null = null;

  constructor(@InjectQueue(QUEUES.agents) private readonly queue: Queue<RunAgentActionJob, RunAgentActionResult>) {
    // Every request waiting for its job adds a 'closing' listener to the queue; many may wait at once.
    this.queue.setMaxListeners(0);
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
