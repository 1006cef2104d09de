/**
 * Verification of the webhooks the service sends, with no dependencies:
 * `verifyWebhook` for receivers, `signWebhook` / `signInboundWebhook` /
 * `buildEvent` for test kits and tools, and the typed events.
 */
export { verifyWebhook } from './verify';
export type { SignatureScheme, VerifyOptions } from './verify';
export { WEBHOOK_ERROR_CODES, WEBHOOK_ERROR_STATUS, WebhookVerificationError } from './errors';
export type { WebhookErrorCode } from './errors';
export type { HeadersLike, PlainHeaders, WebhookHeaders } from './headers';
export type { WebhookPayload } from './payload';
export {
  buildEvent,
  INBOUND_SIGNATURE_HEADER,
  SERVICE_SIGNATURE_HEADER,
  SERVICE_SIGNATURE_PREVIOUS_HEADER,
  signInboundWebhook,
  signWebhook,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
} from './sign';
export type { BuildEventInput, SignWebhookInput } from './sign';
export * from './events';
