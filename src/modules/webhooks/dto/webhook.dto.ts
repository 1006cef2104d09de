import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PageCursor, PageLimit } from '../../../common/pagination/page-query';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../webhook-contract';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';

export class PutWebhookProfileDto {
  @ApiPropertyOptional({ description: "HTTPS target; the same value as the app's webhook_url" })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  url?: string;

  @ApiPropertyOptional({ description: 'Subscribed types, or ["*"] for all', example: ['*'] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsIn(['*', ...WEBHOOK_EVENT_TYPES], { each: true })
  event_types?: string[];

  @ApiPropertyOptional({ minimum: 1, maximum: 30, default: 5 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(30)
  timeout_seconds?: number;

  @ApiPropertyOptional({ description: 'true re-enables a disabled endpoint' })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

export class WebhookTestDto {
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES })
  @IsIn(WEBHOOK_EVENT_TYPES)
  type: WebhookEventType;
}

export class WebhookRecoverDto {
  @ApiProperty({ description: 'Re-send every failed delivery created at or after this instant' })
  @IsISO8601({ strict: true })
  since: string;
}

export const DEFAULT_DELIVERY_PAGE = 50;
export const MAX_DELIVERY_PAGE = 200;

export class DeliveryListQuery {
  @ApiPropertyOptional({ enum: ['pending', 'delivered', 'failed'] })
  @IsOptional()
  @IsIn(['pending', 'delivered', 'failed'])
  status?: 'pending' | 'delivered' | 'failed';
  @ApiPropertyOptional({ maxLength: 100 }) @IsOptional() @IsString() @MaxLength(100) event_type?: string;
  @ApiPropertyOptional({ description: 'Only deliveries about this package', example: 'pkg_0123456789ABCDEFabcdef' })
  @IsOptional()
  @IsString()
  @Matches(/^pkg_[0-9A-Za-z]{22}$/, { message: 'package_id must be a package id (pkg_ followed by 22 letters or digits)' })
  package_id?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'Created at or after' })
  @IsOptional()
  @IsISO8601({ strict: true })
  since?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'Created before' })
  @IsOptional()
  @IsISO8601({ strict: true })
  until?: string;
  @PageCursor() cursor?: string;
  @PageLimit({ max: MAX_DELIVERY_PAGE, default: DEFAULT_DELIVERY_PAGE }) limit?: number;
}

export { WEBHOOK_EVENT_TYPES, type WebhookEventType, type WebhookProfileDto } from '../webhook-contract';
