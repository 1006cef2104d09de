import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsIn, IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { RISK_TIERS, type RiskTier } from '../capability-descriptor';

const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const VERSION = /^\d+\.\d+\.\d+$/;

export class CreatePackageDto {
  @ApiProperty() @IsString() @Matches(/^app_/, { message: 'appId must be an app id' }) appId: string;
  @ApiProperty() @IsString() @Length(1, 100) name: string;
  @ApiProperty({ example: 'acme-calendar' })
  @IsString()
  @Length(2, 64)
  @Matches(SLUG, { message: 'slug must be lowercase words joined by hyphens' })
  slug: string;
  @ApiProperty() @IsString() @Length(1, 5000) description: string;
  @ApiProperty({ enum: RISK_TIERS }) @IsIn(RISK_TIERS) riskTier: RiskTier;
  @ApiProperty({ description: 'Capability descriptors, full or short form', type: 'array', items: { type: 'object' } })
  @IsArray()
  capabilities: unknown[];
  @ApiProperty({
    description:
      'HTTPS base URL of the provider runtime of the first version (public addresses only). Each version keeps its own; live traffic calls the published version’s',
  })
  @IsString()
  @MaxLength(2000)
  runtimeUrl: string;
  @ApiPropertyOptional({ default: '1.0.0' })
  @IsOptional()
  @Matches(VERSION, { message: 'version must be three dot-separated numbers' })
  version?: string;
}

export class CreateVersionDto {
  @ApiProperty() @Matches(VERSION, { message: 'version must be three dot-separated numbers' }) version: string;
  @ApiProperty({ type: 'array', items: { type: 'object' } }) @IsArray() capabilities: unknown[];
  @ApiPropertyOptional({
    description:
      'HTTPS base URL of this version’s runtime; defaults to the newest version’s. Conformance runs of this version call it; live traffic (executions, state polling, realtime streams) moves to it only when this version is published',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  runtimeUrl?: string;
}

export class RejectDto {
  @ApiProperty() @IsString() @Length(1, 2000) reason: string;
}

export class SuspendDto {
  @ApiProperty({ enum: ['policy_violation', 'inactivity', 'health_check_failures'] })
  @IsIn(['policy_violation', 'inactivity', 'health_check_failures'])
  reason: string;
  @ApiProperty() @IsString() @Length(1, 2000) message: string;
  @ApiProperty() @IsString() @Length(1, 2000) remediation: string;
}
