import { ApiExtraModels, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, Length } from 'class-validator';
import { RISK_TIERS, type RiskTier } from '@soul-service/rules';
import { CAPABILITY_INPUT_ITEMS, CAPABILITY_INPUT_MODELS } from './capability-descriptor.dto';

const SLUG = '^[a-z0-9]+(-[a-z0-9]+)*$';
const VERSION = '^(0|[1-9]\\d{0,5})\\.(0|[1-9]\\d{0,5})\\.(0|[1-9]\\d{0,5})$';

const capabilitiesInput = {
  type: 'array',
  minItems: 1,
  maxItems: 50,
  items: CAPABILITY_INPUT_ITEMS,
  description:
    'Capability descriptors, full or short form (docs/descriptor.md). Only `type` and `schema` are required; every other field has a documented default',
} as const;

/**
 * The create and version bodies as OpenAPI shows them. Documentation only: the descriptor contract
 * (packages/rules/src/descriptors/package-descriptor.schema.json, served at GET /v1/providers/descriptor.schema.json)
 * checks these bodies with every error at once, so they carry no class-validator rules and the
 * controller reads the body as given. test/unit/descriptor-contract.spec.ts keeps the fields in step.
 */
@ApiExtraModels(...CAPABILITY_INPUT_MODELS)
export class CreatePackageDto {
  @ApiPropertyOptional({ description: 'The URL of the descriptor schema, for editors; ignored' }) $schema?: string;
  @ApiProperty({ pattern: '^app_' }) appId: string;
  @ApiProperty({ minLength: 1, maxLength: 100 }) name: string;
  @ApiProperty({ example: 'acme-calendar', minLength: 2, maxLength: 64, pattern: SLUG })
  slug: string;
  @ApiProperty({ minLength: 1, maxLength: 5000 }) description: string;
  @ApiProperty({ enum: RISK_TIERS }) riskTier: RiskTier;
  @ApiProperty(capabilitiesInput)
  capabilities: unknown[];
  @ApiPropertyOptional({
    maxLength: 2000,
    description:
      'Optional default for the capabilities’ `runtimeUrl` (the spec puts the runtime URL on the capability): HTTPS base URL of the provider runtime, public addresses only. Each version keeps its own; live traffic calls the published version’s',
  })
  runtimeUrl?: string;
  @ApiPropertyOptional({ default: '1.0.0', pattern: VERSION })
  version?: string;
}

@ApiExtraModels(...CAPABILITY_INPUT_MODELS)
export class CreateVersionDto {
  @ApiPropertyOptional({ description: 'The URL of the descriptor schema, for editors; ignored' }) $schema?: string;
  @ApiProperty({ pattern: VERSION }) version: string;
  @ApiProperty(capabilitiesInput) capabilities: unknown[];
  @ApiPropertyOptional({
    maxLength: 2000,
    description:
      'Default for the capabilities’ `runtimeUrl` in this version; without either, the newest version’s runtime. Conformance runs of this version call it; live traffic (executions, state polling, realtime streams) moves to it only when this version is published',
  })
  runtimeUrl?: string;
}

/** Optional body of a local validation: descriptors to validate instead of the stored ones, not stored. */
@ApiExtraModels(...CAPABILITY_INPUT_MODELS)
export class ValidateDraftDto {
  @ApiPropertyOptional({ description: 'The URL of the descriptor schema, for editors; ignored' }) $schema?: string;
  @ApiProperty(capabilitiesInput) capabilities: unknown[];
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
