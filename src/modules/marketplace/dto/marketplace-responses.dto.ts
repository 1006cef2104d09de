import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { CAPABILITY_MODES, RISK_TIERS } from '../../packages/capability-descriptor';

/** A capability as the catalog shows it. */
export class CatalogCapabilityDto {
  @ApiProperty() name: string;
  @ApiProperty({ enum: CAPABILITY_MODES }) type: string;
  @ApiProperty() description: string;
  @ApiPropertyOptional({ description: 'How a client should present the capability', type: Object }) surfaceGuidance?: unknown;
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

export class InstallDto {
  @ApiProperty() id: string;
  @ApiProperty() package_id: string;
  @ApiProperty() package_slug: string;
  @ApiProperty() version: string;
  @ApiProperty({ type: [String] }) scopes: string[];
  @ApiProperty({ enum: ['active', 'removed'] }) status: string;
  @ApiProperty({ nullable: true, type: String }) removed_reason: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) removed_at: string | null;
}

export class InstallListDto {
  @ApiProperty({ type: [InstallDto] }) installs: InstallDto[];
}
