import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

class SurfacePackageDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() installId: string;
}

class SurfaceCapabilityDto {
  @ApiProperty() name: string;
  @ApiProperty() mode: string;
  @ApiProperty() description: string;
}

/** One component model: what to render for one capability of an installed package. */
export class SurfaceComponentDto {
  @ApiProperty({ type: SurfacePackageDto }) package: SurfacePackageDto;
  @ApiProperty({ type: SurfaceCapabilityDto }) capability: SurfaceCapabilityDto;
  @ApiProperty() intent: string;
  @ApiProperty() component: string;
  @ApiProperty({ nullable: true, type: 'object', additionalProperties: true, description: 'Cached state data' }) data: object | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) fetchedAt: string | null;
  @ApiProperty() stale: boolean;
  @ApiPropertyOptional() degraded?: boolean;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Actions: input schema and an example' }) input?: object;
}

export class SurfaceDto {
  @ApiProperty() placement: string;
  @ApiProperty({ type: [SurfaceComponentDto] }) components: SurfaceComponentDto[];
}
