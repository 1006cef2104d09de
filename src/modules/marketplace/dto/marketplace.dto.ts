import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayUnique, IsArray, IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { OffsetPageQuery } from '../../../common/pagination/page-query';
import { CAPABILITY_MODES, RISK_TIERS } from '@soul-service/rules';

export const INSTALL_SCOPES = ['capabilities:execute', 'installs:read'] as const;

export class CatalogQueryDto extends OffsetPageQuery {
  @ApiPropertyOptional({ description: 'Text search in name and description' }) @IsOptional() @IsString() @MaxLength(200) q?: string;
  @ApiPropertyOptional({ enum: RISK_TIERS }) @IsOptional() @IsIn(RISK_TIERS) tier?: string;
  @ApiPropertyOptional({ enum: CAPABILITY_MODES }) @IsOptional() @IsIn(CAPABILITY_MODES) capability_type?: string;
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
