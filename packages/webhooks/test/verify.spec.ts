import { sign as octokitSign } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import { signWebhook, verifyWebhook, WebhookEventOf } from '@soul-service/webhooks';
import { deliveryBody, lower, nowSeconds, OTHER_SECRET, PREVIOUS_SECRET, refusal, SECRET } from './fixtures';

const ID = 'evt_Q2mXb7Kp0aLr9VnT3sYw1cDe';

/** Standard Webhooks headers made by the reference library, not by this package. */
function standardHeaders(secret: string, body: string, at = new Date()): Record<string, string> {
  return {
    'webhook-id': ID,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(ID, at, body),
  };
}

describe('verifyWebhook with signatures made by other libraries', () => {
  it('accepts Standard Webhooks headers signed by the standardwebhooks library and returns the typed event', () => {
    const body = deliveryBody();
    const event = verifyWebhook(body, standardHeaders(SECRET, body), SECRET);
    expect(event.type).toBe('install.created');
    const created = event as WebhookEventOf<'install.created'>;
    expect(created.data.scopes_granted).toEqual(['profile:read']);
    expect(created.idempotency_key).toBe(`${ID}.app_7hJk2LmN4pQr6StU8vWx0yZa`);
  });

  it('accepts X-Service-Signature made by @octokit/webhooks-methods (GitHub scheme)', async () => {
    const body = deliveryBody();
    const signature = await octokitSign(SECRET, body);
    expect(verifyWebhook(Buffer.from(body), { 'x-service-signature': signature }, SECRET).id).toBe(ID);
  });

  it('makes headers that the standardwebhooks library verifies', () => {
    const body = deliveryBody();
    const headers = signWebhook({ secret: SECRET, payload: body, id: ID });
    expect(new Webhook(SECRET).verify(body, headers)).toMatchObject({ id: ID });
  });
});

describe('verifyWebhook refuses what was not signed by the secret', () => {
  const body = deliveryBody();

  it('refuses a tampered body with signature_mismatch and status 401 (Standard Webhooks)', () => {
    const error = refusal(() => verifyWebhook(body.replace('inst_1', 'inst_2'), standardHeaders(SECRET, body), SECRET));
    expect(error.code).toBe('signature_mismatch');
    expect(error.status).toBe(401);
  });

  it('refuses a tampered body with signature_mismatch (X-Service-Signature)', () => {
    const headers = { 'X-Service-Signature': signWebhook({ secret: SECRET, payload: body })['X-Service-Signature'] };
    expect(refusal(() => verifyWebhook(body.replace('inst_1', 'inst_2'), headers, SECRET)).code).toBe('signature_mismatch');
  });

  it('refuses another secret with signature_mismatch, in both schemes', () => {
    const headers = signWebhook({ secret: OTHER_SECRET, payload: body });
    expect(refusal(() => verifyWebhook(body, headers, SECRET)).code).toBe('signature_mismatch');
    const service = { 'x-service-signature': headers['X-Service-Signature'] };
    expect(refusal(() => verifyWebhook(body, service, SECRET)).code).toBe('signature_mismatch');
  });

  it('refuses a Standard Webhooks signature whose timestamp was changed (the timestamp is signed)', () => {
    const headers = standardHeaders(SECRET, body);
    headers['webhook-timestamp'] = String(Number(headers['webhook-timestamp']) - 1);
    expect(refusal(() => verifyWebhook(body, headers, SECRET)).code).toBe('signature_mismatch');
  });

  it('refuses a signature of the right length but other bytes (no early exit on length alone)', () => {
    const real = signWebhook({ secret: SECRET, payload: body })['X-Service-Signature'];
    const flipped = real.slice(0, -1) + (real.endsWith('0') ? '1' : '0');
    expect(refusal(() => verifyWebhook(body, { 'x-service-signature': flipped }, SECRET)).code).toBe('signature_mismatch');
  });
});

describe('timestamp tolerance', () => {
  const body = deliveryBody();

  it('refuses a delivery signed 301 s ago with timestamp_too_old and the measured skew', () => {
    const headers = standardHeaders(SECRET, body, new Date(Date.now() - 301_000));
    const error = refusal(() => verifyWebhook(body, headers, SECRET));
    expect(error.code).toBe('timestamp_too_old');
    expect(error.skewSeconds).toBeGreaterThanOrEqual(301);
    expect(error.message).toContain(`${error.skewSeconds} s`);
  });

  it('accepts one signed 299 s ago, and honours a custom tolerance', () => {
    const at = nowSeconds() - 299;
    const headers = signWebhook({ secret: SECRET, payload: body, timestamp: at });
    const now = at * 1000 + 299_000;
    expect(verifyWebhook(body, headers, SECRET, { now }).id).toBe(ID);
    expect(refusal(() => verifyWebhook(body, headers, SECRET, { now, toleranceSeconds: 60 })).code).toBe('timestamp_too_old');
  });

  it('refuses a delivery signed 10 minutes in the future with timestamp_in_future and a negative skew', () => {
    const at = nowSeconds() + 600;
    const headers = signWebhook({ secret: SECRET, payload: body, timestamp: at });
    const error = refusal(() => verifyWebhook(body, headers, SECRET, { now: (at - 600) * 1000 }));
    expect(error.code).toBe('timestamp_in_future');
    expect(error.skewSeconds).toBe(-600);
    expect(error.message).toContain('600 s');
  });

  it('refuses a webhook-timestamp that is not Unix seconds with timestamp_invalid', () => {
    const headers = { ...standardHeaders(SECRET, body), 'webhook-timestamp': '2026-01-05T10:00:00Z' };
    expect(refusal(() => verifyWebhook(body, headers, SECRET)).code).toBe('timestamp_invalid');
  });

  it("lets options.schemes = ['standard'] refuse a delivery that carries only X-Service-Signature (no timestamp)", () => {
    const headers = { 'x-service-signature': signWebhook({ secret: SECRET, payload: body })['X-Service-Signature'] };
    expect(verifyWebhook(body, headers, SECRET).id).toBe(ID);
    const error = refusal(() => verifyWebhook(body, headers, SECRET, { schemes: ['standard'] }));
    expect(error.code).toBe('headers_missing');
    expect(error.message).toContain('carries no timestamp');
  });
});

describe('rotation', () => {
  const body = deliveryBody();

  it('accepts a delivery signed with the new secret when given [previous, new]', () => {
    const headers = signWebhook({ secret: SECRET, payload: body });
    expect(verifyWebhook(body, headers, [PREVIOUS_SECRET, SECRET]).id).toBe(ID);
  });

  it('accepts either secret when the header carries two signatures (the grace period), in both schemes', () => {
    const headers = lower(signWebhook({ secret: SECRET, previousSecret: PREVIOUS_SECRET, payload: body }));
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyWebhook(body, headers, PREVIOUS_SECRET).id).toBe(ID);
    expect(verifyWebhook(body, headers, SECRET).id).toBe(ID);
    const service = {
      'x-service-signature': headers['x-service-signature'],
      'x-service-signature-previous': headers['x-service-signature-previous'],
    };
    expect(verifyWebhook(body, service, PREVIOUS_SECRET).id).toBe(ID);
    expect(verifyWebhook(body, service, SECRET).id).toBe(ID);
    expect(refusal(() => verifyWebhook(body, headers, OTHER_SECRET)).code).toBe('signature_mismatch');
  });

  it('accepts the two signatures of a rotation made by the reference library, whatever their order', () => {
    const at = new Date();
    const signature = `${new Webhook(OTHER_SECRET).sign(ID, at, body)} ${new Webhook(SECRET).sign(ID, at, body)}`;
    const headers = { 'webhook-id': ID, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signature };
    expect(verifyWebhook(body, headers, SECRET).id).toBe(ID);
  });
});

describe('headers in every shape a framework gives', () => {
  const body = deliveryBody();
  const signed = signWebhook({ secret: SECRET, payload: body });

  it('reads a WHATWG Headers object', () => {
    expect(verifyWebhook(body, new Headers(signed), SECRET).id).toBe(ID);
  });

  it('reads names in any case and array values (a repeated header)', () => {
    // Signed for the same id and second as `signed`, which was made when the suite loaded.
    const [first, second] = signWebhook({
      secret: SECRET,
      previousSecret: PREVIOUS_SECRET,
      payload: body,
      id: signed['webhook-id'],
      timestamp: Number(signed['webhook-timestamp']),
    })['webhook-signature'].split(' ');
    const headers = {
      'WEBHOOK-ID': signed['webhook-id'],
      'Webhook-Timestamp': signed['webhook-timestamp'],
      'webhook-signature': [second, first],
    };
    expect(verifyWebhook(body, headers, SECRET).id).toBe(ID);
  });

  it('prefers the Standard Webhooks headers: a stale timestamp is refused even with a valid X-Service-Signature', () => {
    const stale = signWebhook({ secret: SECRET, payload: body, timestamp: nowSeconds() - 3600 });
    expect(refusal(() => verifyWebhook(body, stale, SECRET)).code).toBe('timestamp_too_old');
  });

  it('accepts a Uint8Array payload', () => {
    expect(verifyWebhook(new TextEncoder().encode(body), signed, SECRET).id).toBe(ID);
  });
});
