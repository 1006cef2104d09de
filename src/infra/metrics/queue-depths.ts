import { getQueueToken } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { Queue } from 'bullmq';
import { QUEUE_NAMES } from '../queue/queues';

/** The BullMQ job states the metrics report per queue. */
export const QUEUE_STATES = ['waiting', 'prioritized', 'active', 'delayed', 'failed'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

/** Job counts of every queue of the service, by state. */
@Injectable()
export class QueueDepths {
  private queues: Array<[string, Queue]> | undefined;

  constructor(private readonly moduleRef: ModuleRef) {}

  async read(): Promise<Map<string, Record<QueueState, number>>> {
    this.queues ??= QUEUE_NAMES.map((name) => [name, this.moduleRef.get<Queue>(getQueueToken(name), { strict: false })]);
    const counts = await Promise.all(
      this.queues.map(async ([name, queue]) => {
        // The queue's connection queues commands while Redis is away (maxRetriesPerRequest: null) instead of failing
        // them: ask only a connection that is up, so a scrape during an outage does not pile commands up for later.
        const client = await queue.client;
        if (client.status !== 'ready') throw new Error(`Redis connection of queue ${name} is ${client.status}`);
        const raw = await queue.getJobCounts(...QUEUE_STATES);
        const byState = Object.fromEntries(QUEUE_STATES.map((state) => [state, raw[state] ?? 0])) as Record<QueueState, number>;
        return [name, byState] as const;
      }),
    );
    return new Map(counts);
  }
}
