import type { JobSchedulerTemplateOptions, Queue } from 'bullmq';

/**
 * Registers (or keeps) the repeating job `id` every `everyMs`. Idempotent:
 * upserting a scheduler id replaces it, so every worker start registers the
 * same single schedule. A scheduler left by a worker with another period (its
 * configuration changed) is removed first: BullMQ keeps the scheduler's
 * stored `offset` (its phase within the old period) across an upsert with a
 * new `every`, and the first run that starts late by more than a period is
 * then aligned to that offset, which left a fast tick silent for up to the
 * old period after a restart (issue 24, the state poller's tick).
 */
export async function scheduleEvery(
  queue: Queue,
  id: string,
  everyMs: number,
  template: { name: string; data: unknown; opts?: JobSchedulerTemplateOptions },
): Promise<void> {
  const existing = await queue.getJobScheduler(id);
  if (existing && (Number(existing.every) !== everyMs || Number(existing.offset ?? 0) >= everyMs)) {
    await queue.removeJobScheduler(id);
  }
  await queue.upsertJobScheduler(id, { every: everyMs }, template);
}
