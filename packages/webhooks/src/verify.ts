import { timingSafeEqual } from 'node:crypto';
import { RAW_BODY_HOWTO, WebhookVerificationError } from './errors';
import { WebhookEvent } from './events';
import { HeaderReader, headerReader, WebhookHeaders } from './headers';
import { compactForm, payloadBytes, WebhookPayload } from './payload';
import { checkSecret } from './secret';
import { serviceDigest, standardDigest } from './sign';

export type SignatureScheme = 'standard' | 'service';

export interface VerifyOptions {
  /** How far `webhook-timestamp` may be from your clock, either way, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** Your clock (a Date or milliseconds since the epoch), for tests. Default: now. */
  now?: Date | number;
  /**
   * Schemes to accept. Default both: Standard Webhooks when its headers are
   * present, else `X-Service-Signature`. `['standard']` refuses deliveries
   * without a signed timestamp, so a captured request stripped of its
   * Standard Webhooks headers cannot be replayed.
   */
  schemes?: readonly SignatureScheme[];
}

const DEFAULT_TOLERANCE_SECONDS = 300;
const STANDARD_HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
const SERVICE_HEADERS = ['x-service-signature', 'x-service-signature-previous'] as const;
const SHA256_HEX = /^sha256=[0-9a-fA-F]{64}$/;
/** A base64 HMAC-SHA256: 32 bytes are 44 characters with one `=`. */
const V1_BASE64 = /^[A-Za-z0-9+/]{43}=$/;

/** One scheme's verdict on a body; the body is a parameter so a mismatch can be explained by trying its compact form. */
interface SchemeCheck {
  scheme: SignatureScheme;
  matches(body: Buffer): boolean;
  /** Runs after the signature matched: the timestamp is only trusted once it is known to be signed. */
  checkFreshness(): void;
}

/**
 * Verifies a delivery from the service and returns its event.
 *
 * @param payload the raw body, exactly as received (not parsed, not re-serialised)
 * @param headers the request's headers: Node's `req.headers` (any case) or a WHATWG `Headers`
 * @param secret the endpoint's `whsec_…` secret; several during a rotation (any one matching passes)
 * @throws WebhookVerificationError with a stable `code`, a message naming the fix and the `status` to answer
 */
export function verifyWebhook(
  payload: WebhookPayload,
  headers: WebhookHeaders,
  secret: string | readonly string[],
  options: VerifyOptions = {},
): WebhookEvent {
  const secrets = secretList(secret);
  const body = payloadBytes(payload);
  if (headers === null || typeof headers !== 'object') {
    throw new WebhookVerificationError(
      'headers_missing',
      `headers is ${String(headers)}: pass the request's headers (req.headers, or request.headers with fetch).`,
    );
  }
  const check = schemeCheck(headerReader(headers), secrets, options);
  if (!check.matches(body)) explainMismatch(check, body, secrets.length);
  check.checkFreshness();
  return parseEnvelope(body);
}

function secretList(secret: string | readonly string[]): string[] {
  if (!Array.isArray(secret)) return [checkSecret(secret, 'secret')];
  if (secret.length === 0) {
    throw new WebhookVerificationError('secret_missing', 'the list of secrets is empty: pass at least the current whsec_… secret.');
  }
  return secret.map((s, index) => checkSecret(s, `secret[${index}]`));
}

function schemeCheck(read: HeaderReader, secrets: string[], options: VerifyOptions): SchemeCheck {
  const schemes = options.schemes ?? ['standard', 'service'];
  const standardPresent = STANDARD_HEADERS.filter((name) => read(name).length > 0);
  const servicePresent = SERVICE_HEADERS.filter((name) => read(name).length > 0);
  if (standardPresent.length > 0 && schemes.includes('standard')) {
    if (standardPresent.length < STANDARD_HEADERS.length) {
      const missing = STANDARD_HEADERS.filter((name) => !standardPresent.includes(name));
      throw new WebhookVerificationError(
        'headers_incomplete',
        `${standardPresent.join(', ')} present but ${missing.join(', ')} missing: the service always sends the three together, so something between it and you (a proxy, a header allowlist) dropped ${missing.length > 1 ? 'them' : 'it'}.`,
      );
    }
    return standardCheck(read, secrets, toleranceOf(options), nowSeconds(options));
  }
  if (servicePresent.includes('x-service-signature') && schemes.includes('service')) return serviceCheck(read, secrets);
  throw missingHeaders(read, schemes, servicePresent.length > 0);
}

function missingHeaders(read: HeaderReader, schemes: readonly SignatureScheme[], serviceOnly: boolean): WebhookVerificationError {
  const lookedFor = [...(schemes.includes('standard') ? STANDARD_HEADERS : []), ...(schemes.includes('service') ? SERVICE_HEADERS : [])];
  let hint = 'Is this request from the service? If a proxy forwards it, let it pass these headers.';
  if (serviceOnly && !schemes.includes('service')) {
    hint = "Only X-Service-Signature is present, which carries no timestamp, and options.schemes accepts only 'standard'.";
  } else if (read('x-signature-256').length > 0) {
    hint =
      'The request carries X-Signature-256, the header of events a provider sends TO the service; verifyWebhook checks deliveries FROM the service.';
  }
  return new WebhookVerificationError('headers_missing', `no signature headers: looked for ${lookedFor.join(', ')} (any case). ${hint}`);
}

function toleranceOf(options: VerifyOptions): number {
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!Number.isFinite(tolerance) || tolerance < 0) throw new RangeError(`toleranceSeconds must be a finite number >= 0, got ${tolerance}`);
  return tolerance;
}

function nowSeconds(options: VerifyOptions): number {
  const now = options.now ?? Date.now();
  return Math.floor((now instanceof Date ? now.getTime() : now) / 1000);
}

/** Constant time over equal lengths; a signature of another length cannot match and is skipped, not compared. */
function anyEqual(expected: Buffer, given: Buffer[]): boolean {
  let found = false;
  for (const candidate of given) {
    if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) found = true;
  }
  return found;
}

/** `v1,<base64>` entries, space separated, possibly spread over repeated headers joined with ", ". */
function standardSignatures(values: string[]): Buffer[] {
  const entries = values.flatMap((value) => value.split(/\s+/)).filter((entry) => entry !== '');
  const v1 = entries
    .map((entry) => entry.replace(/,$/, ''))
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => entry.slice('v1,'.length))
    .filter((signature) => V1_BASE64.test(signature));
  if (v1.length === 0) {
    throw new WebhookVerificationError(
      'signature_malformed',
      `webhook-signature holds no "v1,<base64 of 32 bytes>" entry (got "${preview(values.join(' '))}"): it must be the header exactly as received, space-separated entries untouched.`,
    );
  }
  return v1.map((signature) => Buffer.from(signature, 'base64'));
}

function standardCheck(read: HeaderReader, secrets: string[], tolerance: number, now: number): SchemeCheck {
  const id = read('webhook-id')[0];
  const timestamp = read('webhook-timestamp')[0];
  if (!/^\d{1,15}$/.test(timestamp)) {
    throw new WebhookVerificationError(
      'timestamp_invalid',
      `webhook-timestamp must be Unix seconds (digits only), got "${preview(timestamp)}".`,
    );
  }
  const given = standardSignatures(read('webhook-signature'));
  return {
    scheme: 'standard',
    matches: (body) => secrets.map((secret) => anyEqual(standardDigest(secret, id, timestamp, body), given)).includes(true),
    checkFreshness: () => checkFreshness(now - Number(timestamp), tolerance),
  };
}

function checkFreshness(skew: number, tolerance: number): void {
  if (skew > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_too_old',
      `the delivery was signed ${skew} s ago, more than the ${tolerance} s tolerance: a replay of an old request, or your clock is ${skew} s fast (sync it with NTP). Every retry is signed afresh, so a genuine delivery is never this old.`,
      { skewSeconds: skew },
    );
  }
  if (-skew > tolerance) {
    throw new WebhookVerificationError(
      'timestamp_in_future',
      `the delivery was signed ${-skew} s in the future, more than the ${tolerance} s tolerance: your clock is ${-skew} s slow (sync it with NTP).`,
      { skewSeconds: skew },
    );
  }
}

function serviceCheck(read: HeaderReader, secrets: string[]): SchemeCheck {
  const values = SERVICE_HEADERS.flatMap((name) => read(name));
  const given = values
    .flatMap((value) => value.split(/[\s,]+/))
    .filter((entry) => SHA256_HEX.test(entry))
    .map((entry) => Buffer.from(entry.slice('sha256='.length), 'hex'));
  if (given.length === 0) {
    throw new WebhookVerificationError(
      'signature_malformed',
      `X-Service-Signature must be "sha256=" followed by 64 hex digits, got "${preview(values.join(', '))}".`,
    );
  }
  return {
    scheme: 'service',
    matches: (body) => secrets.map((secret) => anyEqual(serviceDigest(secret, body), given)).includes(true),
    // This scheme signs no timestamp: there is nothing to check, and nothing bounds a replay (see the README).
    checkFreshness: () => undefined,
  };
}

function explainMismatch(check: SchemeCheck, body: Buffer, secretCount: number): never {
  const compact = compactForm(body);
  if (compact !== null && check.matches(compact)) {
    throw new WebhookVerificationError(
      'payload_reserialized',
      `the signature matches the body as the service sent it, not the bytes you passed: a JSON parser (body-parser, express.json, a framework default) parsed the body and it was serialised again. Pass the raw body. ${RAW_BODY_HOWTO}`,
    );
  }
  const header = check.scheme === 'standard' ? 'webhook-signature' : 'X-Service-Signature';
  const reformatted =
    compact !== null ? ' The payload is not compact JSON as the service sends it: if something re-formatted it, pass the raw body.' : '';
  throw new WebhookVerificationError(
    'signature_mismatch',
    `${header} does not match the payload with the ${secretCount === 1 ? 'secret' : `${secretCount} secrets`} given: use the secret of the endpoint this URL belongs to (each endpoint has its own), the new one after a rotation (pass both during the grace period), and verify the raw body before anything changes it.${reformatted}`,
  );
}

function parseEnvelope(body: Buffer): WebhookEvent {
  let event: unknown;
  try {
    event = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError(
      'payload_invalid',
      'the signature is valid but the body is not JSON: was it decoded with the wrong charset?',
    );
  }
  const e = event as Record<string, unknown>;
  const fields = ['id', 'type', 'created_at', 'app_id', 'idempotency_key'];
  const bad = fields.filter((field) => typeof e?.[field] !== 'string');
  if (typeof event !== 'object' || event === null || bad.length > 0 || typeof e.data !== 'object' || e.data === null) {
    throw new WebhookVerificationError(
      'payload_invalid',
      `the signature is valid but the body is not an event envelope (${bad.length > 0 ? `${bad.join(', ')} not strings` : 'data is not an object'}): it was signed by something other than the service's delivery, e.g. a test that signed another body.`,
    );
  }
  return event as WebhookEvent;
}

function preview(value: string | undefined): string {
  if (value === undefined) return '';
  return value.length > 40 ? `${value.slice(0, 40)}…` : value;
}
