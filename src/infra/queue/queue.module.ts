import { BullModule } from '@nestjs/bullmq';
import { Global, Module } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { redisOptionsFromUrl } from '../redis/redis-options';
import { QUEUE_NAMES } from './queues';

/**
 * BullMQ with one shared connection config; every queue is registered here so
 * any area can inject a producer with `@InjectQueue(QUEUES.x)`. Processors are
 * registered by the worker role only (WorkerModule).
 */
@Global()
@Module({
  imports: [
    BullModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        connection: { ...redisOptionsFromUrl(config.redisUrl), maxRetriesPerRequest: null },
        prefix: `${config.redisPrefix}:bull`,
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
  exports: [BullModule],
})
export class QueueModule {}
