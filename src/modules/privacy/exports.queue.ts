import { QUEUES } from '../../infra/queue/queues';

export const EXPORT_JOBS = {
  build: 'build-export',
} as const;

export interface BuildExportJob {
  exportId: string;
}

export interface BuildExportResult {
  exportId: string;
  outcome: 'built' | 'skipped';
  /** Why nothing was done, for a skipped job. */
  reason?: string;
  bytes?: number;
}

/** One build job per export, job id = export id, recorded in the job outbox with the export row. */
export const EXPORT_BUILD_JOB = { queue: QUEUES.exports, name: EXPORT_JOBS.build } as const;
