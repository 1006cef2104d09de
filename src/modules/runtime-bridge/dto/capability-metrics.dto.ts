import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { METRIC_WINDOW_NAMES, MetricWindowQuery } from '../../../common/metrics/metric-windows';

export class CapabilityMetricsQuery extends MetricWindowQuery {
  @ApiPropertyOptional({ description: 'Only this capability (its name)', maxLength: 128 })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z0-9._~-]{1,128}$/, { message: 'capability must be a capability name (1 to 128 letters, digits, "-", ".", "_" or "~")' })
  capability?: string;
}

const nullableMs = {
  type: Number,
  nullable: true,
  description: 'Estimated from log-scale histogram buckets: within a factor 2^(1/4) (19 %) of the exact value; null without calls',
} as const;

export class ErrorCodeCountDto {
  @ApiProperty({ description: 'The runtime’s or the bridge’s error code', example: 'UPSTREAM_UNAVAILABLE' }) code: string;
  @ApiProperty({ type: 'integer' }) count: number;
}

export class CapabilityMetricsPointDto {
  @ApiProperty({ format: 'date-time', description: 'Start of the bucket' }) start: string;
  @ApiProperty({ type: 'integer' }) calls: number;
  @ApiProperty({ type: 'integer' }) errors: number;
  @ApiProperty(nullableMs) p50_ms: number | null;
  @ApiProperty(nullableMs) p95_ms: number | null;
}

export class CapabilityMetricsDto {
  @ApiProperty({ description: 'Capability name' }) name: string;
  @ApiProperty({ type: 'integer', description: 'Executions that reached the runtime (ok, degraded or failed)' }) calls: number;
  @ApiProperty({ type: 'integer', description: 'Executions that failed' }) errors: number;
  @ApiProperty({ type: Number, nullable: true, description: 'errors / calls (0 to 1, four decimals); null without calls' })
  error_rate: number | null;
  @ApiProperty({ type: [ErrorCodeCountDto], description: 'Failures by error code, most frequent first' })
  errors_by_code: ErrorCodeCountDto[];
  @ApiProperty({ type: 'integer', description: 'Answers served from the state cache without calling the runtime (not in calls)' })
  cached: number;
  @ApiProperty(nullableMs) p50_ms: number | null;
  @ApiProperty(nullableMs) p95_ms: number | null;
  @ApiProperty({
    type: [CapabilityMetricsPointDto],
    description: 'One point per bucket of the window, oldest first, empty buckets included',
  })
  series: CapabilityMetricsPointDto[];
}

export class PackageMetricsDto {
  @ApiProperty() package_id: string;
  @ApiProperty({ enum: METRIC_WINDOW_NAMES }) window: string;
  @ApiProperty({ type: 'integer', description: 'Length of one bucket of the series: 60 (1h) or 3600 (24h, 7d)' }) bucket_seconds: number;
  @ApiProperty({ format: 'date-time', description: 'Start of the first bucket' }) from: string;
  @ApiProperty({ format: 'date-time', description: 'End of the last (current) bucket' }) to: string;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Traces up to this instant are counted (the rollup runs every minute); null before its first run',
  })
  rolled_up_to: string | null;
  @ApiProperty({ type: [CapabilityMetricsDto], description: 'Capabilities with calls or cache hits in the window, by name' })
  capabilities: CapabilityMetricsDto[];
}
