import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';

export class ConformanceRunsQueryDto {
  @ApiProperty({ description: 'The version whose runs to list' })
  @Matches(/^ver_[A-Za-z0-9]{1,64}$/, { message: 'version_id must be a version id' })
  version_id: string;

  @ApiPropertyOptional({ default: 10, maximum: 50 }) @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(50) limit?: number;
}
