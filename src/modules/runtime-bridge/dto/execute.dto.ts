import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsObject, IsOptional, IsString, Matches, MaxLength, ValidateNested } from 'class-validator';

export class ExecutionContextDto {
  @ApiPropertyOptional({ description: 'Language tag passed to the runtime (default en)' })
  @IsOptional()
  @IsString()
  @MaxLength(35)
  locale?: string;
  @ApiPropertyOptional({ description: 'IANA zone name passed to the runtime (default UTC)' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  timezone?: string;
}

export class ExecuteCapabilityDto {
  @ApiPropertyOptional({ description: 'Install to act for (app tokens; a user token acts on its own install)' })
  @IsOptional()
  @Matches(/^inst_/, { message: 'installId must be an install id' })
  installId?: string;
  @ApiPropertyOptional({ description: 'User whose install of this package to act for (app tokens, instead of installId)' })
  @IsOptional()
  @Matches(/^usr_/, { message: 'userId must be a user id' })
  userId?: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      '`state` and `history` params, checked against the capability `schema` before the runtime is called (400 `missing_field` or `invalid_format` naming the field, e.g. `params.account`); history: limit, cursor, direction are always allowed and pass through',
  })
  @IsOptional()
  @IsObject()
  params?: Record<string, unknown>;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      '`action` input, checked against the capability `schema` (400 `missing_field` or `invalid_format` naming the field, e.g. `input.amount`); executing creates a pending confirmation',
  })
  @IsOptional()
  @IsObject()
  input?: Record<string, unknown>;
  @ApiPropertyOptional({
    description:
      '`action` idempotency key. Default: derived from the caller, the install, the capability and the canonical input, held for 15 minutes (the confirmation lifetime) from the first call, so a retry without a key answers the same confirmation',
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  idempotencyKey?: string;
  @ApiPropertyOptional({ type: ExecutionContextDto })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ExecutionContextDto)
  context?: ExecutionContextDto;
}
