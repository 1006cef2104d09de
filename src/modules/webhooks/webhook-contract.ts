/**
 * The webhook API's plain contract: the event types and the profile's shape.
 * No decorators or framework imports, so the developer console imports this
 * file itself instead of keeping a copy (the DTO file re-exports it).
 */
/** Event types a profile may subscribe to (spec, Webhook events to providers). */
export const WEBHOOK_EVENT_TYPES = [
  'package.submitted',
  'package.published',
  'package.suspended',
  'install.created',
  'install.removed',
  'capability.invoked',
  'capability.failed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export interface WebhookProfileDto {
  app_id: string;
  url: string | null;
  event_types: string[];
  timeout_seconds: number;
  enabled: boolean;
  disabled_at: string | null;
  disabled_reason: string | null;
  secret_rotated_at: string;
  previous_secret_expires_at: string | null;
  secret_rotation_due: boolean;
  /** Shown on creation and rotation only. */
  secret?: string;
  created_at: string;
  updated_at: string;
}
