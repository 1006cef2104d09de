import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';

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

/** How one field of the data is shown (`surfaceGuidance.fields` of the descriptor, docs/components.md). */
export class SurfaceFieldDto {
  @ApiPropertyOptional({ maxLength: 80 }) label?: string;
  @ApiPropertyOptional({ maxLength: 16 }) unit?: string;
  @ApiPropertyOptional({ enum: ['number', 'integer', 'percent', 'currency', 'date', 'datetime', 'text'] }) format?: string;
  @ApiPropertyOptional() hidden?: boolean;
}

/** One component model: what to render for one capability of an installed package. */
export class SurfaceComponentDto {
  @ApiProperty({ type: SurfacePackageDto }) package: SurfacePackageDto;
  @ApiProperty({ type: SurfaceCapabilityDto }) capability: SurfaceCapabilityDto;
  @ApiProperty() intent: string;
  @ApiProperty({ description: 'The first preferred component (kept for older clients)' }) component: string;
  @ApiProperty({
    type: [String],
    description: 'Every preferred component, in order; the app renders each that fits the data (docs/components.md)',
  })
  components: string[];
  @ApiPropertyOptional({ description: 'Widget heading from the descriptor (surfaceGuidance.title)' }) title?: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { $ref: getSchemaPath(SurfaceFieldDto) },
    description: 'Label, unit and format per top-level data field (surfaceGuidance.fields)',
  })
  fields?: Record<string, SurfaceFieldDto>;
  @ApiPropertyOptional({
    nullable: true,
    type: 'object',
    additionalProperties: true,
    description:
      'State capabilities: the params the widget is polled with (the schema defaults); null when the schema requires a param without a default, so nothing is polled',
  })
  params?: object | null;
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
