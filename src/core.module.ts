import { DynamicModule, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { IncomingMessage } from 'node:http';
import { hostname } from 'node:os';
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

/** Paths of values that must never reach a log line. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-signature-256"]',
  'req.query.token',
  'res.headers["set-cookie"]',
  '*.password',
  '*.client_secret',
  '*.webhook_secret',
  '*.secret',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.firebase_token',
];

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
        LoggerModule.forRoot({
          pinoHttp: {
            level: config.logLevel,
            redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
            // Fastify assigned the id (see http-server.ts); reuse it so logs and the header agree.
            genReqId: (req: IncomingMessage) => (req as IncomingMessage & { id: string }).id,
            // The role is bound once on the root logger rather than per request (customProps makes a child logger per request).
            base: { pid: process.pid, hostname: hostname(), role: config.role },
            serializers: {
              req: (req: { id: string; method: string; url: string }) => ({
                id: req.id,
                method: req.method,
                url: req.url?.replace(/([?&]token=)[^&]+/, '$1[redacted]'),
              }),
            },
          },
        }),
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
