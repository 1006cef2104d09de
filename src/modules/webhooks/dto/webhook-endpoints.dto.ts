import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { WEBHOOK_EVENT_TYPES } from '../webhook-contract';

const nullableString = { nullable: true, type: String } as const;
const nullableTime = { nullable: true, type: String, format: 'date-time' } as const;
const eventTypesDoc = {
  description: 'Subscribed types, or ["*"] for all. `ping` (the endpoint check) is never a subscription: it is sent on registration only',
  example: ['install.created', 'install.removed'],
} as const;

export class CreateWebhookEndpointDto {
  @ApiProperty({ description: 'HTTPS target; loopback, private and link-local addresses are refused', maxLength: 2000 })
  @IsString()
  @MaxLength(2000)
  url: string;

  @ApiPropertyOptional({ maxLength: 200, description: 'What the endpoint is for, shown in the console' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  description?: string;

  @ApiPropertyOptional({ ...eventTypesDoc, default: ['*'] })
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

  @ApiPropertyOptional({
    description:
      'Your own signing secret (Svix accepts one too): `whsec_` and the base64 of 24 to 64 random bytes. Set it in your receiver first and the ping on creation already verifies; without it a secret is generated and shown once',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  @IsOptional()
  @IsString()
  @Matches(/^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/, { message: 'secret must be whsec_ followed by the base64 of 24 to 64 bytes' })
  secret?: string;

  @ApiPropertyOptional({ default: true, description: 'false creates the endpoint paused (no ping is sent)' })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

export class UpdateWebhookEndpointDto {
  @ApiPropertyOptional({ description: 'A new HTTPS target; a changed URL is checked with a signed ping', maxLength: 2000 })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  url?: string;

  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  description?: string;

  @ApiPropertyOptional(eventTypesDoc)
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsIn(['*', ...WEBHOOK_EVENT_TYPES], { each: true })
  event_types?: string[];

  @ApiPropertyOptional({ minimum: 1, maximum: 30 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(30)
  timeout_seconds?: number;

  @ApiPropertyOptional({ description: 'false pauses deliveries (events are logged as failed, endpoint_disabled); true resumes them' })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

export class PingResultDto {
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({ description: 'The ping in the endpoint delivery log (a test delivery of type ping)' }) delivery_id: string;
  @ApiProperty({ nullable: true, type: 'integer', description: 'Status of the signed ping; null when no answer came' })
  status_code: number | null;
  @ApiProperty({ description: 'The signed ping was answered 2xx' }) ok: boolean;
  @ApiProperty({ type: 'integer' }) latency_ms: number;
  @ApiProperty({ ...nullableString, description: 'timeout, dns_error, connection_error, tls_error, blocked_target or http_<status>' })
  error: string | null;
  @ApiProperty({
    enum: ['verified', 'not_verified', 'unknown'],
    description:
      'verified: a second ping signed with a wrong secret was refused (4xx); not_verified: it was accepted, so the receiver does not check signatures; unknown: the signed ping failed, or the second one got no 2xx or 4xx',
  })
  signature_check: 'verified' | 'not_verified' | 'unknown';
}

@ApiExtraModels(PingResultDto)
export class WebhookEndpointDto {
  @ApiProperty({ example: 'whe_0123456789ABCDEFabcdef' }) id: string;
  @ApiProperty() app_id: string;
  @ApiProperty({ description: "The app's webhook profile (GET|PUT …/webhook): its URL is the app's webhook_url" }) primary: boolean;
  @ApiProperty(nullableString) url: string | null;
  @ApiProperty() description: string;
  @ApiProperty({ enum: ['*', ...WEBHOOK_EVENT_TYPES], isArray: true, description: 'Subscribed types, or ["*"] for all' })
  event_types: string[];
  @ApiProperty({ type: 'integer' }) timeout_seconds: number;
  @ApiProperty() enabled: boolean;
  @ApiProperty(nullableTime) disabled_at: string | null;
  @ApiProperty(nullableString) disabled_reason: string | null;
  @ApiProperty({ ...nullableTime, description: 'Since when every delivery failed; 5 days of it disable the endpoint' })
  failing_since: string | null;
  @ApiProperty({ format: 'date-time' }) secret_rotated_at: string;
  @ApiProperty(nullableTime) previous_secret_expires_at: string | null;
  @ApiProperty() secret_rotation_due: boolean;
  @ApiPropertyOptional({ description: 'The signing secret (whsec_…); shown on creation (when generated) and rotation only' })
  secret?: string;
  @ApiProperty({
    oneOf: [{ $ref: getSchemaPath(PingResultDto) }],
    nullable: true,
    description: 'The latest endpoint check; null before the first (and for an endpoint created paused)',
  })
  last_ping: PingResultDto | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class WebhookEndpointListDto {
  @ApiProperty({ type: [WebhookEndpointDto], description: 'Every endpoint of the app, primary first, then oldest first' })
  endpoints: WebhookEndpointDto[];
  @ApiProperty({ type: 'integer', description: 'The most endpoints an app may have (16), its primary one included' })
  limit: number;
}
