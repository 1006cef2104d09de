import { ApiExtraModels, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ConformanceRunDto, DIMENSION_REPORT_SCHEMA, RULES_VERSION_PROPERTY } from '../../conformance/conformance-run-responses.dto';
import { RISK_TIERS } from '@soul-service/rules';
import { CAPABILITY_ITEMS, CAPABILITY_MODELS } from './capability-descriptor.dto';

const nullableString = { nullable: true, type: String } as const;
const nullableTime = { nullable: true, type: String, format: 'date-time' } as const;
const capabilities = {
  type: 'array',
  items: CAPABILITY_ITEMS,
  description: 'Capability descriptors in their stored form: full form, defaults filled in (docs/descriptor.md)',
} as const;

@ApiExtraModels(...CAPABILITY_MODELS)
export class VersionDto {
  @ApiProperty() id: string;
  @ApiProperty() packageId: string;
  @ApiProperty() version: string;
  @ApiProperty({ description: 'draft, in_review, approved, published or superseded' }) state: string;
  @ApiProperty(nullableString) runtimeUrl: string | null;
  @ApiProperty(capabilities) capabilities: object[];
  @ApiProperty(nullableString) reviewReason: string | null;
  @ApiProperty(nullableTime) submittedAt: string | null;
  @ApiProperty(nullableTime) publishedAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export class PackageDto {
  @ApiProperty() id: string;
  @ApiProperty() appId: string;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty() description: string;
  @ApiProperty({ enum: RISK_TIERS }) riskTier: string;
  @ApiProperty(nullableString) runtimeUrl: string | null;
  @ApiProperty(nullableString) latestVersionId: string | null;
  @ApiProperty(nullableString) publishedVersionId: string | null;
  @ApiProperty({ enum: ['active', 'suspended'] }) status: string;
  @ApiProperty({ nullable: true, type: 'object', additionalProperties: true, description: 'reason, message and remediation' })
  suspension: object | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiPropertyOptional({ type: [VersionDto] }) versions?: VersionDto[];
  @ApiPropertyOptional({
    type: 'integer',
    description: 'Active installs of the package (users who installed it and have not removed it); in the package detail only',
  })
  installCount?: number;
}

export class PackageListDto {
  @ApiProperty({ type: [PackageDto] }) packages: PackageDto[];
}

/** The result of a local validation (schema, contracts, documentation). */
export class LocalValidationResultDto {
  @ApiProperty() id: string;
  @ApiProperty({ type: 'number' }) score: number;
  @ApiProperty() passed: boolean;
  @ApiProperty({ enum: [false] }) full: false;
  @ApiProperty({ type: 'object', additionalProperties: DIMENSION_REPORT_SCHEMA }) dimensions: object;
  @ApiProperty(RULES_VERSION_PROPERTY) rulesVersion: string;
}

export class SubmissionDto {
  @ApiProperty({ type: VersionDto }) version: VersionDto;
  @ApiProperty({ enum: ['manual', 'automatic'] }) review: string;
  @ApiProperty({ type: ConformanceRunDto }) conformance: ConformanceRunDto;
}

export class PublishedPackageDto extends PackageDto {
  @ApiProperty({ type: VersionDto }) version: VersionDto;
  @ApiProperty() catalogUrl: string;
}

export class ReviewPackageDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() slug: string;
  @ApiProperty({ enum: RISK_TIERS }) riskTier: string;
  @ApiProperty() appId: string;
}

export class ReviewDto extends VersionDto {
  @ApiProperty({ type: ReviewPackageDto }) package: ReviewPackageDto;
  @ApiProperty({ nullable: true, type: String }) submittedBy: string | null;
}

export class ReviewQueueDto {
  @ApiProperty({ type: [ReviewDto] }) reviews: ReviewDto[];
}
