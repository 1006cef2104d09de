import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  signInboundWebhook,
  signWebhook,
  verifyWebhook,
  WEBHOOK_ERROR_CODES,
  WEBHOOK_ERROR_STATUS,
  WebhookErrorCode,
  WebhookVerificationError,
} from '@soul-service/webhooks';
import { deliveryBody, nowSeconds, OTHER_SECRET, refusal, SECRET } from './fixtures';

const body = deliveryBody();
const signed = () => signWebhook({ secret: SECRET, payload: body });

/** One way to cause each code, and words its message must contain to name the fix. */
const CASES: Record<WebhookErrorCode, { cause: () => unknown; says: string[] }[]> = {
  payload_not_raw: [
    {
      cause: () => verifyWebhook(JSON.parse(body) as never, signed(), SECRET),
      says: ['parsed object', 'express.raw', 'parseAs', 'Buffer.concat', 'req.text()'],
    },
    { cause: () => verifyWebhook(undefined as never, signed(), SECRET), says: ['undefined', 'raw body'] },
    { cause: () => verifyWebhook(String(JSON.parse(body)), signed(), SECRET), says: ['[object Object]'] },
  ],
  payload_reserialized: [
    { cause: () => verifyWebhook(JSON.stringify(JSON.parse(body), null, 2), signed(), SECRET), says: ['serialised again', 'express.raw'] },
    {
      // Some serialisers escape non-ASCII: same JSON value, other bytes.
      cause: () =>
        verifyWebhook(
          body.replace(/[^ -~]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
          signed(),
          SECRET,
        ),
      says: ['raw body'],
    },
  ],
  payload_invalid: [
    { cause: () => verifyWebhook('not json', signWebhook({ secret: SECRET, payload: 'not json' }), SECRET), says: ['not JSON'] },
    {
      cause: () => verifyWebhook('{"id":"evt_1"}', signWebhook({ secret: SECRET, payload: '{"id":"evt_1"}' }), SECRET),
      says: ['type', 'not strings'],
    },
  ],
  secret_missing: [
    { cause: () => verifyWebhook(body, signed(), undefined as never), says: ['environment variable'] },
    { cause: () => verifyWebhook(body, signed(), []), says: ['empty'] },
  ],
  secret_whitespace: [
    { cause: () => verifyWebhook(body, signed(), `${SECRET}\n`), says: ['trailing newline', 'trim'] },
    { cause: () => verifyWebhook(body, signed(), [SECRET, ` ${SECRET}`]), says: ['secret[1]'] },
  ],
  secret_quoted: [{ cause: () => verifyWebhook(body, signed(), `"${SECRET}"`), says: ['quote'] }],
  secret_prefix_missing: [
    { cause: () => verifyWebhook(body, signed(), SECRET.slice('whsec_'.length)), says: ['whsec_', 'prefix included'] },
  ],
  secret_is_signature: [
    { cause: () => verifyWebhook(body, signed(), signed()['X-Service-Signature']), says: ['sha256=', 'not a header value'] },
    { cause: () => verifyWebhook(body, signed(), signed()['webhook-signature']), says: ['v1,'] },
  ],
  secret_invalid: [{ cause: () => verifyWebhook(body, signed(), 'whsec_abc-def_ghi'), says: ['base64', 'rotate'] }],
  headers_missing: [
    {
      cause: () => verifyWebhook(body, {}, SECRET),
      says: ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'x-service-signature', 'x-service-signature-previous'],
    },
    {
      cause: () => verifyWebhook(body, { 'x-signature-256': signInboundWebhook(SECRET, body) }, SECRET),
      says: ['X-Signature-256', 'TO the service'],
    },
    { cause: () => verifyWebhook(body, undefined as never, SECRET), says: ['req.headers'] },
  ],
  headers_incomplete: [
    {
      cause: () => verifyWebhook(body, { ...signed(), 'webhook-timestamp': undefined }, SECRET),
      says: ['webhook-timestamp missing', 'proxy'],
    },
  ],
  timestamp_invalid: [{ cause: () => verifyWebhook(body, { ...signed(), 'webhook-timestamp': '-5' }, SECRET), says: ['Unix seconds'] }],
  timestamp_too_old: [
    {
      cause: () => verifyWebhook(body, signWebhook({ secret: SECRET, payload: body, timestamp: nowSeconds() - 1000 }), SECRET),
      says: ['NTP', 'replay'],
    },
  ],
  timestamp_in_future: [
    {
      cause: () => verifyWebhook(body, signWebhook({ secret: SECRET, payload: body, timestamp: nowSeconds() + 1000 }), SECRET),
      says: ['NTP', 'slow'],
    },
  ],
  signature_malformed: [
    { cause: () => verifyWebhook(body, { ...signed(), 'webhook-signature': 'v1,abc' }, SECRET), says: ['v1,<base64'] },
    { cause: () => verifyWebhook(body, { 'x-service-signature': 'abcdef' }, SECRET), says: ['64 hex digits', 'abcdef'] },
  ],
  signature_mismatch: [
    { cause: () => verifyWebhook(body, signed(), OTHER_SECRET), says: ['each endpoint has its own', 'rotation'] },
    { cause: () => verifyWebhook(`${body.slice(0, -1)}, "x": 1}`, signed(), SECRET), says: ['not compact JSON'] },
  ],
};

describe('WebhookVerificationError codes', () => {
  for (const code of WEBHOOK_ERROR_CODES) {
    describe(code, () => {
      CASES[code].forEach(({ cause, says }, index) => {
        it(`is thrown with status ${WEBHOOK_ERROR_STATUS[code]} and names the fix (case ${index + 1})`, () => {
          const error = refusal(cause);
          expect(error).toBeInstanceOf(WebhookVerificationError);
          expect(error.code).toBe(code);
          expect(error.status).toBe(WEBHOOK_ERROR_STATUS[code]);
          for (const words of says) expect(error.message).toContain(words);
        });
      });
    });
  }

  it('answers 500 for the receiver’s own mistakes, so the service retries once they are fixed, and 401 for forged or stale requests', () => {
    expect(WEBHOOK_ERROR_STATUS.secret_whitespace).toBe(500);
    expect(WEBHOOK_ERROR_STATUS.payload_reserialized).toBe(500);
    expect(WEBHOOK_ERROR_STATUS.signature_mismatch).toBe(401);
    expect(WEBHOOK_ERROR_STATUS.timestamp_too_old).toBe(401);
  });

  it('lists every code, with its status, in the README table', () => {
    const readme = readFileSync(join(__dirname, '../README.md'), 'utf8');
    const rows = [...readme.matchAll(/^\| `([a-z_]+)` +\| (\d{3}) +\|/gm)].map(([, code, status]) => [code, Number(status)]);
    expect(Object.fromEntries(rows)).toEqual(WEBHOOK_ERROR_STATUS);
  });
});
