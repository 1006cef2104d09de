import { WebhookVerificationError } from './errors';

const PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Refuses a secret that cannot be one the service issued, naming the mistake:
 * the service's secrets are `whsec_` + base64 with no whitespace or quotes, so
 * each of these is a copy-paste or configuration slip, not a bad delivery.
 */
export function checkSecret(secret: unknown, position: string): string {
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new WebhookVerificationError(
      'secret_missing',
      `the ${position} is ${secret === '' ? 'an empty string' : String(secret)}: set it to the signing secret (whsec_…) shown when the webhook profile or endpoint was created or rotated (is the environment variable set?).`,
    );
  }
  if (/\s/.test(secret)) {
    const where = secret.trim() === secret ? 'inside it' : 'at its start or end';
    throw new WebhookVerificationError(
      'secret_whitespace',
      `the ${position} has whitespace ${where} (often a trailing newline from a .env file, \`echo\` or a secret store): remove it, e.g. secret.trim().`,
    );
  }
  if (/^['"`]|['"`]$/.test(secret)) {
    throw new WebhookVerificationError(
      'secret_quoted',
      `the ${position} starts or ends with a quote: the quotes of the .env file or shell became part of the value. Remove them.`,
    );
  }
  if (/^(sha256=|v1,)/.test(secret)) {
    throw new WebhookVerificationError(
      'secret_is_signature',
      `the ${position} looks like a signature (it starts with "${secret.startsWith('v1,') ? 'v1,' : 'sha256='}"), not a secret: pass the whsec_… secret of the endpoint, not a header value.`,
    );
  }
  if (!secret.startsWith(PREFIX)) {
    throw new WebhookVerificationError(
      'secret_prefix_missing',
      `the ${position} does not start with "whsec_": pass the whole secret as shown, prefix included (X-Service-Signature is keyed with the whole string).`,
    );
  }
  if (!BASE64.test(secret.slice(PREFIX.length))) {
    throw new WebhookVerificationError(
      'secret_invalid',
      `the ${position} is not "whsec_" followed by base64: it was cut or altered when copied. Copy it again, or rotate it to get a new one.`,
    );
  }
  return secret;
}

/** The key of the Standard Webhooks scheme: the base64-decoded part after `whsec_`. */
export function standardKey(secret: string): Buffer {
  return Buffer.from(secret.slice(PREFIX.length), 'base64');
}
