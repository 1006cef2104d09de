import { createHmac, randomBytes } from 'node:crypto';
import { WebhookEnvelope } from './events';
import { checkSecret, standardKey } from './secret';
import { payloadBytes, WebhookPayload } from './payload';

/** The header names, as the service writes them (Node lower-cases them on receipt). */
export const SERVICE_SIGNATURE_HEADER = 'X-Service-Signature';
export const SERVICE_SIGNATURE_PREVIOUS_HEADER = 'X-Service-Signature-Previous';
export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';
/** What a provider's runtime sends with an event to `POST /v1/providers/runtime/webhook`. */
export const INBOUND_SIGNATURE_HEADER = 'X-Signature-256';

/** HMAC-SHA256 of the raw body keyed with the whole secret string (GitHub's `X-Hub-Signature-256` scheme). */
export function serviceDigest(secret: string, body: Buffer): Buffer {
  return createHmac('sha256', secret).update(body).digest();
}

/** Standard Webhooks: HMAC-SHA256 of `id.timestamp.body` keyed with the decoded secret. */
export function standardDigest(secret: string, id: string, timestamp: string, body: Buffer): Buffer {
  return createHmac('sha256', standardKey(secret)).update(`${id}.${timestamp}.`).update(body).digest();
}

export interface SignWebhookInput {
  /** The endpoint's current secret (`whsec_…`). */
  secret: string;
  /** During a rotation's grace period the service signs with the previous secret too. */
  previousSecret?: string;
  /** The exact body to send. */
  payload: WebhookPayload;
  /** `webhook-id`; the service uses the event id. Default: the payload's `id`, else a new `evt_` id. */
  id?: string;
  /** Signing time, Unix seconds or a Date. Default: now. */
  timestamp?: number | Date;
}

function seconds(timestamp: number | Date | undefined): number {
  if (timestamp === undefined) return Math.floor(Date.now() / 1000);
  return timestamp instanceof Date ? Math.floor(timestamp.getTime() / 1000) : Math.floor(timestamp);
}

/** The service uses the event id as `webhook-id`; a body that is an envelope names it. */
function defaultId(body: Buffer): string {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { id?: unknown };
    if (typeof parsed?.id === 'string' && parsed.id !== '') return parsed.id;
  } catch {
    // Not JSON: any unique id will do.
  }
  return `evt_${randomBytes(16).toString('hex')}`;
}

/**
 * The signature headers exactly as the service sends them, for test kits,
 * local forwarding and `trigger`: a receiver cannot tell them from a delivery's.
 */
export function signWebhook(input: SignWebhookInput): Record<string, string> {
  const secrets = [
    checkSecret(input.secret, 'secret'),
    ...(input.previousSecret === undefined ? [] : [checkSecret(input.previousSecret, 'previousSecret')]),
  ];
  const body = payloadBytes(input.payload);
  const id = input.id ?? defaultId(body);
  const timestamp = String(seconds(input.timestamp));
  const headers: Record<string, string> = {
    [SERVICE_SIGNATURE_HEADER]: `sha256=${serviceDigest(secrets[0], body).toString('hex')}`,
    [WEBHOOK_ID_HEADER]: id,
    [WEBHOOK_TIMESTAMP_HEADER]: timestamp,
    [WEBHOOK_SIGNATURE_HEADER]: secrets.map((secret) => `v1,${standardDigest(secret, id, timestamp, body).toString('base64')}`).join(' '),
  };
  if (secrets[1] !== undefined) headers[SERVICE_SIGNATURE_PREVIOUS_HEADER] = `sha256=${serviceDigest(secrets[1], body).toString('hex')}`;
  return headers;
}

/**
 * The `X-Signature-256` value for an event a provider sends to the service
 * (`sha256=<hex>`, keyed with the app's webhook secret, over the exact body).
 */
export function signInboundWebhook(secret: string, body: WebhookPayload): string {
  return `sha256=${serviceDigest(checkSecret(secret, 'secret'), payloadBytes(body)).toString('hex')}`;
}

export interface BuildEventInput<T extends string, D> {
  type: T;
  data: D;
  app_id: string;
  /** Default: a new `evt_` id. */
  id?: string;
  /** Default: now. */
  created_at?: Date | string;
}

/**
 * An envelope and its body serialised as the service serialises it (field
 * order, compact JSON, `idempotency_key` = `<id>.<app_id>`), so a test event
 * is byte-for-byte what a delivery would carry.
 */
export function buildEvent<T extends string, D>(input: BuildEventInput<T, D>): { event: WebhookEnvelope<T, D>; body: string } {
  const id = input.id ?? `evt_${randomBytes(16).toString('hex')}`;
  const createdAt = input.created_at ?? new Date();
  const event: WebhookEnvelope<T, D> = {
    id,
    type: input.type,
    created_at: typeof createdAt === 'string' ? createdAt : createdAt.toISOString(),
    app_id: input.app_id,
    idempotency_key: `${id}.${input.app_id}`,
    data: input.data,
  };
  return { event, body: JSON.stringify(event) };
}
