import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { MetricWindowQuery } from '../../common/metrics/metric-windows';
import { PlatformProblems } from '../../common/openapi/error-responses';
import { PlatformRoute } from '../providers/auth/platform-auth.guard';
import { PlatformPrincipal, Principal } from '../providers/auth/platform-principal';
import { DeliveryMetrics } from './delivery-metrics.service';
import { DeliveryMetricsDto } from './dto/delivery-metrics.dto';

@ApiTags('provider metrics')
@Controller('v1/providers/apps/:app_id/webhook/metrics')
export class DeliveryMetricsController {
  constructor(private readonly metrics: DeliveryMetrics) {}

  @Get()
  @PlatformRoute({ scope: 'webhooks:read' })
  @ApiOperation({
    summary: 'Webhook delivery success rate per endpoint over a window (1h, 24h or 7d)',
    description: 'Counts the deliveries created in the window by status; docs/metrics.md explains every figure.',
  })
  @ApiOkResponse({ type: DeliveryMetricsDto })
  @PlatformProblems(400, 404)
  get(@Principal() principal: PlatformPrincipal, @Param('app_id') appId: string, @Query() query: MetricWindowQuery) {
    return this.metrics.forApp(principal, appId, query.window);
  }
}
