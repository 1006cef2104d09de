import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { WEBHOOK_EVENT_TYPES } from '../webhook-contract';

const nullableString = { nullable: true, type: String } as const;
const nullableTime = { nullable: true, type: String, format: 'date-time' } as const;

export class WebhookProfileResponseDto {
  @ApiProperty() app_id: string;
  @ApiProperty(nullableString) url: string | null;
  @ApiProperty({ enum: ['*', ...WEBHOOK_EVENT_TYPES], isArray: true, description: 'Subscribed types, or ["*"] for all' })
  event_types: string[];
  @ApiProperty({ type: 'integer' }) timeout_seconds: number;
  @ApiProperty() enabled: boolean;
  @ApiProperty(nullableTime) disabled_at: string | null;
  @ApiProperty(nullableString) disabled_reason: string | null;
  @ApiProperty({ format: 'date-time' }) secret_rotated_at: string;
  @ApiProperty(nullableTime) previous_secret_expires_at: string | null;
  @ApiProperty() secret_rotation_due: boolean;
  @ApiPropertyOptional({ description: 'The signing secret (spec name); shown on creation and rotation only' }) webhook_secret?: string;
  @ApiPropertyOptional({ description: 'Alias of webhook_secret, kept for existing clients; shown on creation and rotation only' })
  secret?: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class DeliverySummaryDto {
  @ApiProperty() id: string;
  @ApiProperty({ description: 'The endpoint the delivery goes to (whe_…); the webhook profile is the primary endpoint' })
  endpoint_id: string;
  @ApiProperty() event_id: string;
  @ApiProperty() event_type: string;
  @ApiProperty() idempotency_key: string;
  @ApiProperty({ enum: ['pending', 'delivered', 'failed'] }) status: string;
  @ApiProperty({ type: 'integer' }) attempt_count: number;
  @ApiProperty(nullableTime) next_attempt_at: string | null;
  @ApiProperty({ nullable: true, type: 'integer' }) last_status_code: number | null;
  @ApiProperty(nullableString) last_error: string | null;
  @ApiProperty(nullableString) replay_of: string | null;
  @ApiProperty() test: boolean;
  @ApiProperty({
    ...nullableString,
    description:
      'The package the event concerns (package.*, install.* and capability.* events); null for an event about no package and for test events',
  })
  package_id: string | null;
  @ApiProperty(nullableTime) delivered_at: string | null;
  @ApiProperty(nullableTime) failed_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class DeliveryPageDto {
  @ApiProperty({ type: [DeliverySummaryDto] }) deliveries: DeliverySummaryDto[];
  @ApiProperty({ ...nullableString, description: 'Pass as `cursor` for the next page; null on the last page' }) next_cursor: string | null;
}

export class DeliveryAttemptDto {
  @ApiProperty({ type: 'integer' }) attempt: number;
  @ApiProperty({ format: 'date-time' }) started_at: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) request_headers: Record<string, string>;
  @ApiProperty({ nullable: true, type: 'integer' }) status_code: number | null;
  @ApiProperty({ nullable: true, type: 'integer' }) latency_ms: number | null;
  @ApiProperty(nullableString) response_body: string | null;
  @ApiProperty(nullableString) error_class: string | null;
  @ApiProperty() outcome: string;
}

export class DeliveryDetailDto extends DeliverySummaryDto {
  @ApiProperty({ description: 'The signed event body as delivered', type: 'object', additionalProperties: true }) payload: unknown;
  @ApiProperty({ type: [DeliveryAttemptDto] }) attempts: DeliveryAttemptDto[];
}

export class RecoverRequestedDto {
  @ApiProperty() job_id: string;
  @ApiProperty({ enum: ['queued'] }) status: 'queued';
  @ApiProperty({ format: 'date-time' }) since: string;
}

export class InboundAckDto {
  @ApiProperty({ enum: ['accepted'] }) status: 'accepted';
  @ApiProperty() event_id: string;
  @ApiProperty({ format: 'date-time' }) processed_at: string;
}

export class WebhookIpsDto {
  @ApiProperty({ type: [String], description: 'IPv4 CIDRs deliveries come from' }) ipv4: string[];
  @ApiProperty({ type: [String], description: 'IPv6 CIDRs deliveries come from' }) ipv6: string[];
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}
