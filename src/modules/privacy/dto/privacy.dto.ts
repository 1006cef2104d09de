import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { EXPORT_FORMATS, type ExportFormat } from '../export-formats';

export class RequestExportDto {
  @ApiPropertyOptional({ enum: EXPORT_FORMATS, default: 'json' })
  @IsOptional()
  @IsIn(EXPORT_FORMATS)
  format?: ExportFormat;
}

/** Export result of the spec (`export_url`, `expires_at`, `format`) plus the export's id and status. */
export class ExportResultDto {
  @ApiProperty({ example: 'exp_4fGq0sWc8nYtR2mKpL7xZa' }) id: string;
  @ApiProperty({ enum: ['pending', 'ready', 'failed'] }) status: string;
  @ApiProperty({ enum: EXPORT_FORMATS }) format: ExportFormat;
  @ApiProperty({ description: 'GET it with the same bearer token; 202 with Retry-After until the export is ready' }) export_url: string;
  @ApiProperty() expires_at: string;
}

export class ExportPendingDto {
  @ApiProperty() id: string;
  @ApiProperty({ enum: ['pending'] }) status: 'pending';
}

export class DeletionResultDto {
  @ApiProperty() deleted: boolean;
  @ApiProperty() message: string;
}
