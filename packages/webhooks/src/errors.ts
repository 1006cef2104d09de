/**
 * Why a delivery was refused. Codes are stable (match on `code`, never on the
 * message); messages name the fix, because a signature failure otherwise says
 * nothing about which of the usual mistakes was made.
 */
export type WebhookErrorCode =
  | 'payload_not_raw'
  | 'payload_reserialized'
  | 'payload_invalid'
  | 'secret_missing'
  | 'secret_whitespace'
  | 'secret_quoted'
  | 'secret_prefix_missing'
  | 'secret_is_signature'
  | 'secret_invalid'
  | 'headers_missing'
  | 'headers_incomplete'
  | 'timestamp_invalid'
  | 'timestamp_too_old'
  | 'timestamp_in_future'
  | 'signature_malformed'
  | 'signature_mismatch';

/**
 * The status a receiver should answer with. The service does not retry a 401,
 * so a mistake on the receiver's side (its secret, its body parser) answers 500:
 * the delivery is retried and arrives once the receiver is fixed.
 */
export const WEBHOOK_ERROR_STATUS: Readonly<Record<WebhookErrorCode, number>> = {
  payload_not_raw: 500,
  payload_reserialized: 500,
  payload_invalid: 400,
  secret_missing: 500,
  secret_whitespace: 500,
  secret_quoted: 500,
  secret_prefix_missing: 500,
  secret_is_signature: 500,
  secret_invalid: 500,
  headers_missing: 401,
  headers_incomplete: 401,
  timestamp_invalid: 401,
  timestamp_too_old: 401,
  timestamp_in_future: 401,
  signature_malformed: 401,
  signature_mismatch: 401,
};

/** Every code, for exhaustive handling and the README's table. */
export const WEBHOOK_ERROR_CODES = Object.keys(WEBHOOK_ERROR_STATUS) as readonly WebhookErrorCode[];

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  /** The HTTP status to answer the delivery with (see the README's error table). */
  readonly status: number;
  /** For `timestamp_too_old` / `timestamp_in_future`: your clock minus the signing time, in seconds. */
  readonly skewSeconds?: number;

  constructor(
    readonly code: WebhookErrorCode,
    message: string,
    details: { skewSeconds?: number } = {},
  ) {
    super(`${code}: ${message}`);
    this.status = WEBHOOK_ERROR_STATUS[code];
    if (details.skewSeconds !== undefined) this.skewSeconds = details.skewSeconds;
  }
}

/** How to read the raw body, for the messages of the payload errors. */
export const RAW_BODY_HOWTO =
  "Express: app.post(path, express.raw({ type: 'application/json' }), handler) and pass req.body (a Buffer); " +
  "Fastify: app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => done(null, body)); " +
  "node:http: collect the request's chunks and pass Buffer.concat(chunks); fetch/Next.js: pass await req.text().";
