import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayUnique, IsArray, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { CAPABILITY_MODES, RISK_TIERS } from '../../packages/capability-descriptor';

export const INSTALL_SCOPES = ['capabilities:execute', 'installs:read'] as const;

export class CatalogQueryDto {
  @ApiPropertyOptional({ description: 'Text search in name and description' }) @IsOptional() @IsString() @MaxLength(200) q?: string;
  @ApiPropertyOptional({ enum: RISK_TIERS }) @IsOptional() @IsIn(RISK_TIERS) tier?: string;
  @ApiPropertyOptional({ enum: CAPABILITY_MODES }) @IsOptional() @IsIn(CAPABILITY_MODES) capability_type?: string;
  @ApiPropertyOptional({ default: 20, maximum: 100 }) @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100) limit?: number;
  @ApiPropertyOptional({ default: 0 }) @IsOptional() @Type(() => Number) @IsInt() @Min(0) offset?: number;
}

export class CreateInstallDto {
  @ApiPropertyOptional() @IsString() @Matches(/^pkg_/, { message: 'package_id must be a package id' }) package_id: string;
  @ApiPropertyOptional({ enum: INSTALL_SCOPES, isArray: true, description: 'Scopes granted to the provider; default capabilities:execute' })
  @IsOptional()
  @IsArray()
  @ArrayUnique()
  @IsIn(INSTALL_SCOPES, { each: true })
  scopes?: string[];
}
