import { QUEUES } from '../../infra/queue/queues';
import { CapabilityDescriptor } from '@soul-service/rules';

export interface FullRunJob {
  confId: string;
  runtimeUrl: string | null;
  riskTier: string;
  capabilities: CapabilityDescriptor[];
}

/** One `full-run` job per full conformance run, job id = run id, recorded in the job outbox with the run's row. */
export const FULL_RUN_JOB = {
  queue: QUEUES.conformance,
  name: 'full-run',
  opts: { attempts: 2, backoff: { type: 'fixed', delay: 5000 } },
} as const;
