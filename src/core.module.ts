import { DynamicModule, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './infra/database/database.module';
import { closeQueueConnection, QUEUE_CONNECTION, QueueConnection, QueueModule } from './infra/queue/queue.module';
import { RedisModule } from './infra/redis/redis.module';
import { RealtimeModule } from './infra/realtime/realtime.module';
import { EventsModule } from './modules/events/events.module';
import { CryptoModule } from './common/crypto/crypto.module';
import { IdempotencyModule } from './common/idempotency/idempotency.module';
import { MailModule } from './infra/mail/mail.module';
import { RateLimitModule } from './common/rate-limit/rate-limit.module';
import { OutboundHttpModule } from './common/http/outbound-http';
import { MetricsModule } from './infra/metrics/metrics.module';
import { LoggingModule } from './infra/logging/logging.module';

/** What both roles share: configuration, logging, PostgreSQL, Redis, queues, the outbox and the metrics. */
@Module({})
export class CoreModule implements OnApplicationShutdown {
  constructor(@Inject(QUEUE_CONNECTION) private readonly queueConnection: QueueConnection) {}

  /**
   * Closes BullMQ's shared cluster client. Here, not in the global QueueModule:
   * Nest shuts modules down deepest first and global ones before all, so only a
   * module this near the root runs after BullMQ's workers and queues have closed.
   */
  async onApplicationShutdown(): Promise<void> {
    await closeQueueConnection(this.queueConnection);
  }

  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: CoreModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule.forRoot({ level: config.logLevel, role: config.role }),
        DatabaseModule,
        RedisModule,
        RealtimeModule,
        QueueModule,
        EventsModule,
        CryptoModule,
        MailModule,
        RateLimitModule,
        IdempotencyModule,
        OutboundHttpModule,
        MetricsModule,
      ],
    };
  }
}
