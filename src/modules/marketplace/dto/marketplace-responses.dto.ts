import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { CAPABILITY_MODES, RISK_TIERS } from '@soul-service/rules';

/** A capability as the catalog shows it. */
export class CatalogCapabilityDto {
  @ApiProperty() name: string;
  @ApiProperty({ enum: CAPABILITY_MODES }) type: string;
  @ApiProperty() description: string;
  @ApiPropertyOptional({
    description: 'How a client should present the capability',
    type: 'object',
    properties: {
      intent: { type: 'string' },
      placement: { type: 'array', items: { type: 'string' } },
      preferredComponents: { type: 'array', items: { type: 'string' } },
    },
  })
  surfaceGuidance?: unknown;
}

/** A published package in the catalog. */
export class CatalogListingDto {
  @ApiProperty() id: string;
  @ApiProperty() slug: string;
  @ApiProperty() name: string;
  @ApiProperty() description: string;
  @ApiProperty({ enum: RISK_TIERS }) riskTier: string;
  @ApiProperty() versionId: string;
  @ApiProperty() version: string;
  @ApiProperty({ type: [CatalogCapabilityDto] }) capabilities: CatalogCapabilityDto[];
  @ApiProperty({ format: 'date-time' }) publishedAt: string;
  @ApiProperty() catalogUrl: string;
}

export class CatalogPageDto {
  @ApiProperty({ type: [CatalogListingDto] }) packages: CatalogListingDto[];
  @ApiProperty({ type: 'integer' }) total: number;
  @ApiProperty({ type: 'integer' }) limit: number;
  @ApiProperty({ type: 'integer' }) offset: number;
}

/** A published version waiting on an install for the user's consent (docs/decisions.md, "upgrade rule"). */
export class InstallUpgradeDto {
  @ApiProperty() version_id: string;
  @ApiProperty() version: string;
  @ApiProperty({
    type: [String],
    enum: CAPABILITY_MODES,
    description: 'Capability modes the version adds to the installed one: what the user is asked to consent to',
  })
  new_capability_modes: string[];
}

@ApiExtraModels(InstallUpgradeDto)
export class InstallDto {
  @ApiProperty() id: string;
  @ApiProperty() package_id: string;
  @ApiProperty() package_slug: string;
  @ApiProperty() package_name: string;
  @ApiProperty({ description: 'The installed version; it follows published versions that need no new consent' }) version: string;
  @ApiProperty({ type: [String] }) scopes: string[];
  @ApiProperty({ enum: ['active', 'removed'] }) status: string;
  @ApiProperty({ nullable: true, type: String }) removed_reason: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) removed_at: string | null;
  @ApiProperty({
    description:
      'The runtime refused a freshly issued token for this install (a second AUTH_EXPIRED): calls fail until the user re-authorizes with POST /v1/installs',
  })
  reauthorization_required: boolean;
  @ApiProperty({
    oneOf: [{ $ref: getSchemaPath(InstallUpgradeDto) }],
    nullable: true,
    description: 'A published version that needs the user’s consent again; POST /v1/installs for the package grants it',
  })
  upgrade: InstallUpgradeDto | null;
}

export class InstallListDto {
  @ApiProperty({ type: [InstallDto] }) installs: InstallDto[];
}
