import { Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { closeRedisClient, createRedisClient, RedisClient } from './redis-client';

/** Injection token of the shared ioredis client, one server or a cluster (commands only; no blocking calls, no subscriptions). */
export const REDIS = Symbol('REDIS');

@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): RedisClient => {
        const logger = new Logger('Redis');
        const client = createRedisClient(config, {
          // Fail fast instead of queueing commands while Redis is away: callers
          // (readiness, rate limits) must see the outage, not hang on it.
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          retryStrategy: (times) => Math.min(times * 200, 2000),
          enableAutoPipelining: true,
        });
        let reported = false;
        client.on('error', (error: Error) => {
          if (!reported) logger.warn(`Redis unavailable: ${error.message}`);
          reported = true;
        });
        client.on('ready', () => (reported = false));
        return client;
      },
    },
  ],
  exports: [REDIS],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  async onApplicationShutdown(): Promise<void> {
    await closeRedisClient(this.redis);
  }
}
