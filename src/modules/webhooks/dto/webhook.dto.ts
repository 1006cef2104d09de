import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../webhook-contract';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsISO8601, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

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

export class DeliveryListQuery {
  @IsOptional() @IsIn(['pending', 'delivered', 'failed']) status?: 'pending' | 'delivered' | 'failed';
  @IsOptional() @IsString() @MaxLength(100) event_type?: string;
  @IsOptional() @IsISO8601({ strict: true }) since?: string;
  @IsOptional() @IsISO8601({ strict: true }) until?: string;
  @IsOptional() @IsString() @MaxLength(200) cursor?: string;
  @IsOptional() @IsString() limit?: string;
}

export { WEBHOOK_EVENT_TYPES, type WebhookEventType, type WebhookProfileDto } from '../webhook-contract';
