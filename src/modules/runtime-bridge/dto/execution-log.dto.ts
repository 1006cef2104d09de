import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageCursor, PageLimit } from '../../../common/pagination/page-query';
import { PHASES } from '../execution-traces.service';

/** What a trace's `outcome` may be (the `capability_executions` check constraint). */
export const EXECUTION_OUTCOMES = ['ok', 'degraded', 'cached', 'pending', 'failed'] as const;

const idOf = (prefix: string, what: string) =>
  Matches(new RegExp(`^${prefix}_[0-9A-Za-z]{22}$`), { message: `${what} must be an id (${prefix}_ followed by 22 letters or digits)` });

export class ExecutionLogQuery {
  @ApiPropertyOptional({ example: 'pkg_0123456789ABCDEFabcdef' })
  @IsOptional()
  @IsString()
  @idOf('pkg', 'package_id')
  package_id?: string;

  @ApiPropertyOptional({ description: 'Capability name', maxLength: 128 })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  @Matches(/^[A-Za-z0-9._~-]+$/, { message: 'capability must be a capability name (letters, digits, "-", ".", "_" or "~")' })
  capability?: string;

  @ApiPropertyOptional({ example: 'inst_0123456789ABCDEFabcdef' })
  @IsOptional()
  @IsString()
  @idOf('inst', 'install_id')
  install_id?: string;

  @ApiPropertyOptional({
    enum: EXECUTION_OUTCOMES,
    description: 'ok, degraded, cached (no runtime call), pending (awaiting confirmation) or failed',
  })
  @IsOptional()
  @IsIn(EXECUTION_OUTCOMES)
  outcome?: string;

  @ApiPropertyOptional({
    description: 'The error code recorded for a failed execution (the runtime envelope code, or the service problem code)',
    maxLength: 100,
  })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  @Matches(/^[A-Za-z0-9_.-]+$/, { message: 'error_code must be an error code (letters, digits, _ . -)' })
  error_code?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Started at or after' })
  @IsOptional()
  @IsISO8601({ strict: true })
  since?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Started before' })
  @IsOptional()
  @IsISO8601({ strict: true })
  until?: string;

  @ApiPropertyOptional({
    description: "Only this app's executions (a developer token with several apps)",
    example: 'app_0123456789ABCDEFabcdef',
  })
  @IsOptional()
  @IsString()
  @idOf('app', 'app_id')
  app_id?: string;

  @PageCursor() cursor?: string;
  @PageLimit() limit?: number;
}

export class ExecutionPhaseDto {
  @ApiProperty({ enum: PHASES }) name: string;
  @ApiProperty({ description: 'When the phase began, in milliseconds after the execution started' }) offset_ms: number;
  @ApiProperty({ description: 'How long the phase took, in milliseconds' }) duration_ms: number;
}

export class ExecutionErrorDto {
  @ApiProperty({ description: "The runtime's error envelope code, or the service's problem code when the runtime gave none" }) code: string;
  @ApiProperty() message: string;
  @ApiProperty({ description: 'Whether the retries (or their time budget) ran out' }) retries_exhausted: boolean;
}

export class ExecutionSummaryDto {
  @ApiProperty({
    description: 'The request id (req_): the X-Service-Request-Id header and the `rid` claim of the runtime token the runtime received',
  })
  request_id: string;
  @ApiProperty() app_id: string;
  @ApiProperty() package_id: string;
  @ApiProperty() install_id: string;
  @ApiProperty() capability: string;
  @ApiProperty({ enum: ['state', 'action', 'history', 'realtime', 'webhook'] }) mode: string;
  @ApiProperty({ enum: ['api', 'confirmation', 'poll', 'stream'], description: 'What started it' }) trigger: string;
  @ApiProperty({ enum: EXECUTION_OUTCOMES }) outcome: string;
  @ApiProperty({ nullable: true, type: String }) error_code: string | null;
  @ApiProperty({ type: 'integer', description: 'Calls made to the runtime, retries included (0: none, e.g. a cache hit)' })
  attempts: number;
  @ApiProperty({ type: 'integer' }) duration_ms: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

@ApiExtraModels(ExecutionErrorDto)
export class ExecutionDetailDto extends ExecutionSummaryDto {
  @ApiProperty({ description: 'The user the install belongs to (as in capability.* events)' }) user_id: string;
  @ApiProperty({ type: 'integer', description: 'Retries after the first call' }) retries: number;
  @ApiProperty({ type: [ExecutionPhaseDto], description: 'The phases it went through, in order: accept, resolve, invoke, deliver' })
  phases: ExecutionPhaseDto[];
  @ApiProperty({ oneOf: [{ $ref: getSchemaPath(ExecutionErrorDto) }], nullable: true, description: 'Null when the call succeeded' })
  error: ExecutionErrorDto | null;
}

export class ExecutionPageDto {
  @ApiProperty({ type: [ExecutionSummaryDto], description: 'Newest first' }) executions: ExecutionSummaryDto[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as `cursor` for the next page; null on the last page' })
  next_cursor: string | null;
}
