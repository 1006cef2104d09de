import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Header carrying the spec's signature with the current secret: exactly one `sha256=<hex>`. */
export const SIGNATURE_HEADER = 'X-Service-Signature';
/** During a rotation's grace period: the same signature made with the other (previous) secret. */
export const PREVIOUS_SIGNATURE_HEADER = 'X-Service-Signature-Previous';
/** Header an inbound provider webhook carries (spec, Authentication point 4). */
export const INBOUND_SIGNATURE_HEADER = 'x-signature-256';

/**
 * A signing secret in the Standard Webhooks shape: `whsec_` + base64 of 32
 * random bytes, so `standardwebhooks`/`svix` accept it as it is.
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The spec's scheme (GitHub's `X-Hub-Signature-256` too): HMAC-SHA256 of the raw
 * body keyed with the secret string exactly as shown to the provider.
 */
export function specSignature(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * Standard Webhooks `v1` signature: HMAC-SHA256 over `id.timestamp.body`, keyed
 * with the base64-decoded part of the `whsec_` secret, base64 encoded.
 */
export function standardSignature(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64')}`;
}

export interface SigningSecrets {
  current: string;
  /** Still valid during the grace period after a rotation. */
  previous: string | null;
}

/** Every signing header of one attempt. The body must be the exact bytes sent. */
export function signatureHeaders(
  secrets: SigningSecrets,
  messageId: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  const headers: Record<string, string> = {
    [SIGNATURE_HEADER]: specSignature(secrets.current, body),
    'webhook-id': messageId,
    'webhook-timestamp': String(timestampSeconds),
    // Standard Webhooks carries several signatures in one header, space separated, for rotation.
    'webhook-signature': [secrets.current, ...(secrets.previous ? [secrets.previous] : [])]
      .map((secret) => standardSignature(secret, messageId, timestampSeconds, body))
      .join(' '),
  };
  if (secrets.previous) headers[PREVIOUS_SIGNATURE_HEADER] = specSignature(secrets.previous, body);
  return headers;
}

/** Constant-time check of an inbound `sha256=<hex>` header against the raw bytes. */
export function verifySpecSignature(secret: string, body: Buffer, header: string): boolean {
  if (!header.startsWith('sha256=')) return false;
  const given = Buffer.from(header.slice('sha256='.length), 'hex');
  const expected = createHmac('sha256', secret).update(body).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Signing material never enters the delivery log. */
export function redactHeaders(headers: Record<string, string>): Record<string, string> {
  const redacted: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    redacted[name] = /signature|authorization/i.test(name) ? '[redacted]' : value;
  }
  return redacted;
}
