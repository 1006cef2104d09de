import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsObject, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateIf } from 'class-validator';

export class DevSessionQuery {
  @ApiPropertyOptional({
    description: 'The app (a console token with several apps); an app token opens its own',
    example: 'app_0123456789ABCDEFabcdef',
  })
  @IsOptional()
  @IsString()
  @Matches(/^app_[0-9A-Za-z]{22}$/, { message: 'app_id must be an app id (app_ followed by 22 letters or digits)' })
  app_id?: string;
}

/**
 * The CLI's answer to one call: the local runtime's status, headers and body as it answered, or, when it
 * did not answer, `failure` and `detail` (the bridge then reports runtime_unavailable or capability_timeout).
 */
export class DevAnswerDto {
  @ApiPropertyOptional({ description: 'The runtime’s HTTP status (with body)', minimum: 100, maximum: 599 })
  @ValidateIf((o: DevAnswerDto) => o.failure === undefined)
  @IsInt()
  @Min(100)
  @Max(599)
  status?: number;

  @ApiPropertyOptional({
    description: 'The runtime’s content-type and retry-after headers',
    type: 'object',
    additionalProperties: { type: 'string' },
  })
  @IsOptional()
  @IsObject()
  headers?: Record<string, string>;

  @ApiPropertyOptional({ description: 'The runtime’s answer, as text (with status)' })
  @ValidateIf((o: DevAnswerDto) => o.failure === undefined)
  @IsString()
  body?: string;

  @ApiPropertyOptional({
    enum: ['unreachable', 'timeout'],
    description: 'Why the local runtime gave no answer (instead of status and body)',
  })
  @IsOptional()
  @IsIn(['unreachable', 'timeout'])
  failure?: 'unreachable' | 'timeout';

  @ApiPropertyOptional({ description: 'What happened, with failure', maxLength: 1000 })
  @ValidateIf((o: DevAnswerDto) => o.failure !== undefined)
  @IsString()
  @MaxLength(1000)
  detail?: string;
}

/** The data of the stream's first event, `ready`. */
export interface DevReadyDto {
  session_id: string;
  app_id: string;
  /** The developer's own user account (verified email = the developer's): calls for its installs come here; null when none exists. */
  user_id: string | null;
}

/** The answer was handed to the waiting call. */
export class DevAnswerAckDto {
  @ApiProperty({ example: 'dcall_0123456789ABCDEFabcdef' }) call_id: string;
  @ApiProperty({ enum: ['delivered'] }) status: 'delivered';
}
