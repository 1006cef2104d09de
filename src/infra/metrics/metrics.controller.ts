import { Controller, Get, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { UserApiErrors } from '../../common/openapi/error-responses';
import { BackboneMetrics } from './backbone-metrics';
import { MetricsTokenGuard } from './metrics-token.guard';

/** Prometheus scrape target of the api role (the worker serves the same on its health port, see worker.ts). */
@ApiTags('metrics')
@ApiBearerAuth()
@UseGuards(MetricsTokenGuard)
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: BackboneMetrics) {}

  @Get()
  @ApiOperation({
    summary: 'Prometheus metrics: outbox lag, relay backlog, queue depths, webhook deliveries and process metrics',
    description:
      'Prometheus text exposition format 0.0.4 (docs/operations.md "Metrics"). Bearer `METRICS_TOKEN` or `OPERATOR_TOKEN`; ' +
      'closed (403) when neither is configured. A gauge whose source (PostgreSQL, Redis) does not answer is left out and ' +
      'counted in `service_metrics_scrape_errors_total`; the scrape still answers 200.',
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'The metrics', content: { 'text/plain': { schema: { type: 'string' } } } })
  @UserApiErrors(403)
  async scrape(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const { contentType, body } = await this.metrics.render();
    void reply.header('content-type', contentType);
    return body;
  }
}
