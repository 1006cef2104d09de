import { Global, Module } from '@nestjs/common';
import { BackboneBacklogRepository } from './backbone-backlog.repository';
import { BackboneMetrics } from './backbone-metrics';
import { MetricsController } from './metrics.controller';
import { MetricsTokenGuard } from './metrics-token.guard';
import { QueueDepths } from './queue-depths';

/**
 * The process's Prometheus metrics, in both roles: any provider may inject `BackboneMetrics` to count what it does.
 * The api serves them at `GET /metrics`; the worker role has no HTTP server for controllers and serves them on its
 * health port instead (worker.ts).
 */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [BackboneMetrics, BackboneBacklogRepository, QueueDepths, MetricsTokenGuard],
  exports: [BackboneMetrics, BackboneBacklogRepository],
})
export class MetricsModule {}
