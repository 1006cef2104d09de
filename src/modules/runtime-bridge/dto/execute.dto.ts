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
  @ApiPropertyOptional({ description: '`state` and `history` params (history: limit, cursor, direction pass through)' })
  @IsOptional()
  @IsObject()
  params?: Record<string, unknown>;
  @ApiPropertyOptional({ description: '`action` input; executing creates a pending confirmation' })
  @IsOptional()
  @IsObject()
  input?: Record<string, unknown>;
  @ApiPropertyOptional({ description: '`action` idempotency key (default: derived from the input)' })
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
