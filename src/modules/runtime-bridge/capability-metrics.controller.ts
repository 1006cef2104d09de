import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { PlatformProblems } from '../../common/openapi/error-responses';
import { PlatformRoute } from '../providers/auth/platform-auth.guard';
import { PlatformPrincipal, Principal } from '../providers/auth/platform-principal';
import { CapabilityMetrics } from './capability-metrics.service';
import { CapabilityMetricsQuery, PackageMetricsDto } from './dto/capability-metrics.dto';

@ApiTags('provider metrics')
@Controller('v1/providers/packages/:package_id/metrics')
export class CapabilityMetricsController {
  constructor(private readonly metrics: CapabilityMetrics) {}

  @Get()
  @PlatformRoute({ scope: 'packages:read' })
  @ApiOperation({
    summary: 'Metrics per capability of a package: calls, error rate and errors by code, p50 and p95 latency, and a series for charts',
    description:
      'Read from per-minute and per-hour rollups of the execution traces, refreshed every minute (`rolled_up_to`). Percentiles are estimated from log-scale histogram buckets, within 19 % of the exact value. docs/metrics.md explains every figure.',
  })
  @ApiOkResponse({ type: PackageMetricsDto })
  @PlatformProblems(400, 404)
  get(@Principal() principal: PlatformPrincipal, @Param('package_id') packageId: string, @Query() query: CapabilityMetricsQuery) {
    return this.metrics.forPackage(principal, packageId, query.window, query.capability);
  }
}
