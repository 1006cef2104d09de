import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';

const nullableTime = { nullable: true, type: String, format: 'date-time' } as const;
/** Whatever JSON the provider runtime answered. */
const anyValue: ApiPropertyOptions = {
  nullable: true,
  description: 'As the runtime answered',
  oneOf: [
    { type: 'object', additionalProperties: true },
    { type: 'array', items: {} },
    { type: 'string' },
    { type: 'number' },
    { type: 'boolean' },
  ],
};

/** A pending (or decided) confirmation of an `action` capability. */
export class ActionConfirmationDto {
  @ApiProperty() confirmationId: string;
  @ApiProperty() requestId: string;
  @ApiProperty() packageId: string;
  @ApiProperty({ nullable: true, type: String, description: 'Name of the package, for the confirmation UI' }) packageName: string | null;
  @ApiProperty({ enum: ['user', 'app'], description: 'Who started the action: the user, or an app acting for them' }) startedBy: string;
  @ApiProperty() installId: string;
  @ApiProperty() capability: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) input: Record<string, unknown>;
  @ApiProperty({ nullable: true, type: String }) idempotencyKey: string | null;
  @ApiProperty({ description: 'pending_confirmation, executing, completed, failed, cancelled or expired' }) status: string;
  @ApiProperty(anyValue) result: unknown;
  @ApiProperty({ nullable: true, type: String }) message: string | null;
  @ApiProperty({ nullable: true, type: 'object', additionalProperties: true }) error: object | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) expiresAt: string;
  @ApiProperty(nullableTime) decidedAt: string | null;
  @ApiProperty() confirmUrl: string;
  @ApiProperty() cancelUrl: string;
}

/** What a capability execution answers; further members follow the capability's mode (state, history, action, realtime). */
export class ExecutionResultDto {
  @ApiProperty({ description: 'Id of this execution' }) requestId: string;
  @ApiProperty({ description: 'ok, degraded, pending_confirmation, subscribed, …' }) status: string;
  @ApiPropertyOptional(anyValue) data?: unknown;
}
