import { ApiExtraModels, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsIn, IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { RISK_TIERS, type RiskTier } from '../../descriptors/capability-descriptor';
import { CAPABILITY_INPUT_ITEMS, CAPABILITY_INPUT_MODELS } from './capability-descriptor.dto';

const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const VERSION = /^\d+\.\d+\.\d+$/;

const capabilitiesInput = {
  type: 'array',
  minItems: 1,
  maxItems: 50,
  items: CAPABILITY_INPUT_ITEMS,
  description:
    'Capability descriptors, full or short form (docs/descriptor.md). Only `type` and `schema` are required; every other field has a documented default',
} as const;

@ApiExtraModels(...CAPABILITY_INPUT_MODELS)
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
  @ApiProperty(capabilitiesInput)
  @IsArray()
  capabilities: unknown[];
  @ApiPropertyOptional({
    description:
      'Optional default for the capabilities’ `runtimeUrl` (the spec puts the runtime URL on the capability): HTTPS base URL of the provider runtime, public addresses only. Each version keeps its own; live traffic calls the published version’s',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  runtimeUrl?: string;
  @ApiPropertyOptional({ default: '1.0.0' })
  @IsOptional()
  @Matches(VERSION, { message: 'version must be three dot-separated numbers' })
  version?: string;
}

@ApiExtraModels(...CAPABILITY_INPUT_MODELS)
export class CreateVersionDto {
  @ApiProperty() @Matches(VERSION, { message: 'version must be three dot-separated numbers' }) version: string;
  @ApiProperty(capabilitiesInput) @IsArray() capabilities: unknown[];
  @ApiPropertyOptional({
    description:
      'Default for the capabilities’ `runtimeUrl` in this version; without either, the newest version’s runtime. Conformance runs of this version call it; live traffic (executions, state polling, realtime streams) moves to it only when this version is published',
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
