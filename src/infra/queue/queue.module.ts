import { BullModule } from '@nestjs/bullmq';
import { Global, Module } from '@nestjs/common';
import type { RedisOptions } from 'ioredis';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { closeRedisClient, createRedisClient, hashTag, isClustered, RedisClient } from '../redis/redis-client';
import { redisOptionsFromUrl } from '../redis/redis-options';
import { JobOutbox } from './job-outbox';
import { JobOutboxRepository } from './job-outbox.repository';
import { QUEUE_NAMES } from './queues';
import { ServiceQueue, ServiceWorker } from './quiet-close';

/**
 * BullMQ's connection. On one Redis, options: every queue and worker opens its
 * own connections from them, as BullMQ does by default. On a cluster, one
 * `Cluster` client shared by the queues and workers of this process (BullMQ
 * cannot build a cluster client from options; workers duplicate it for their
 * blocking reads); CoreModule closes it after BullMQ has closed.
 */
export const QUEUE_CONNECTION = Symbol('QUEUE_CONNECTION');
export type QueueConnection = RedisOptions | RedisClient;

/**
 * Prefix of every BullMQ key: `{<REDIS_PREFIX>}:bull:<queue>:…`. The hash tag
 * puts all the queues in one cluster slot, as BullMQ requires for the keys of
 * one queue (its scripts touch several) and for flows across queues.
 */
export const bullPrefix = (config: AppConfig): string => `${hashTag(config.redisPrefix)}:bull`;

/** Closes BullMQ's shared cluster client, if any (the options of one Redis own no connection). */
export async function closeQueueConnection(connection: QueueConnection): Promise<void> {
  if (connection instanceof Object && 'isCluster' in connection) await closeRedisClient(connection);
}

// The classes `@nestjs/bullmq` makes queues and workers of (set before `registerQueue` below runs): BullMQ's, except
// that closing one while Redis is unreachable leaves no unhandled rejection (quiet-close.ts).
BullModule.queueClass = ServiceQueue;
BullModule.workerClass = ServiceWorker;

/**
 * BullMQ with one shared connection config; every queue is registered here so
 * any area can inject a producer with `@InjectQueue(QUEUES.x)`. Processors are
 * registered by the worker role only (WorkerModule).
 */
@Global()
@Module({
  imports: [
    BullModule.forRootAsync({
      inject: [APP_CONFIG, QUEUE_CONNECTION],
      useFactory: (config: AppConfig, connection: QueueConnection) => ({
        connection,
        prefix: bullPrefix(config),
        defaultJobOptions: {
          attempts: 5,
          backoff: { type: 'exponential', delay: 1000 },
          removeOnComplete: { age: 24 * 3600, count: 1000 },
          removeOnFail: { age: 7 * 24 * 3600 },
        },
      }),
    }),
    BullModule.registerQueue(...QUEUE_NAMES.map((name) => ({ name }))),
  ],
  providers: [
    JobOutbox,
    JobOutboxRepository,
    {
      provide: QUEUE_CONNECTION,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): QueueConnection =>
        isClustered(config)
          ? createRedisClient(config, { maxRetriesPerRequest: null })
          : { ...redisOptionsFromUrl(config.redisUrl), maxRetriesPerRequest: null },
    },
  ],
  exports: [BullModule, QUEUE_CONNECTION, JobOutbox, JobOutboxRepository],
})
export class QueueModule {}
