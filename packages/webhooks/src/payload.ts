import { RAW_BODY_HOWTO, WebhookVerificationError } from './errors';

/** The raw body as received: the exact bytes the service signed. */
export type WebhookPayload = string | Buffer | Uint8Array;

/**
 * The payload as bytes, refusing what cannot be the raw body: a parsed
 * object, nothing at all, or an object turned into text by `String(obj)`.
 */
export function payloadBytes(payload: unknown): Buffer {
  if (typeof payload === 'string') {
    if (payload === '[object Object]') {
      throw new WebhookVerificationError(
        'payload_not_raw',
        `the payload is the text "[object Object]": a parsed body was converted to a string. Pass the raw body instead. ${RAW_BODY_HOWTO}`,
      );
    }
    return Buffer.from(payload, 'utf8');
  }
  if (Buffer.isBuffer(payload)) return payload;
  if (payload instanceof Uint8Array) return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  const what =
    payload === null || payload === undefined ? String(payload) : `a parsed ${Array.isArray(payload) ? 'array' : typeof payload}`;
  throw new WebhookVerificationError(
    'payload_not_raw',
    `the payload is ${what}, not the raw body: a body parser ran before verification, and re-serialising it changes the bytes. ${RAW_BODY_HOWTO}`,
  );
}

/**
 * The body as the service would have serialised it, when it differs from what
 * was given: the service sends compact `JSON.stringify` output, so a body that
 * matches only in this form was parsed and written again on its way in
 * (pretty-printed, re-escaped). Used to explain a mismatch, never to accept one.
 */
export function compactForm(body: Buffer): Buffer | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  const compact = Buffer.from(JSON.stringify(parsed), 'utf8');
  return compact.equals(body) ? null : compact;
}
