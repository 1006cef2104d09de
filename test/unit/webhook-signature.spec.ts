import { createHmac } from 'node:crypto';
import { sign as octokitSign, verify as octokitVerify } from '@octokit/webhooks-methods';
import { Webhook } from 'standardwebhooks';
import {
  INBOUND_SIGNATURE_HEADER,
  newWebhookSecret,
  PREVIOUS_SIGNATURE_HEADER,
  redactHeaders,
  SIGNATURE_HEADER,
  signatureHeaders,
  specSignature,
  standardSignature,
  verifySpecSignature,
} from '../../src/modules/webhooks/webhook-signature';

/** Two fixed secrets in the Standard Webhooks shape (`whsec_` + base64 of 32 bytes). */
const CURRENT = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
const PREVIOUS = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
const BODY = '{"event":"package.published","data":{"id":"pkg_1","name":"ünïcode"}}';

/** Independent reference implementations straight from node:crypto, written from the docs. */
const hmacHex = (key: string | Buffer, data: string | Buffer) => createHmac('sha256', key).update(data).digest('hex');
const hmacB64 = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest('base64');
const keyOf = (secret: string) => Buffer.from(secret.slice('whsec_'.length), 'base64');

describe('webhook signatures', () => {
  describe('header names', () => {
    it('are the documented ones', () => {
      expect(SIGNATURE_HEADER).toBe('X-Service-Signature');
      expect(PREVIOUS_SIGNATURE_HEADER).toBe('X-Service-Signature-Previous');
      expect(INBOUND_SIGNATURE_HEADER).toBe('x-signature-256');
    });
  });

  describe('newWebhookSecret', () => {
    it('is whsec_ followed by the base64 of 32 random bytes', () => {
      const secret = newWebhookSecret();
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(keyOf(secret)).toHaveLength(32);
    });

    it('is different every time', () => {
      const secrets = new Set(Array.from({ length: 20 }, () => newWebhookSecret()));
      expect(secrets.size).toBe(20);
    });

    it('is accepted as it is by standardwebhooks', () => {
      const secret = newWebhookSecret();
      const signed = standardSignature(secret, 'msg_1', 1_700_000_000, BODY);
      expect(signed).toBe(new Webhook(secret).sign('msg_1', new Date(1_700_000_000_000), BODY));
    });
  });

  describe('specSignature (X-Service-Signature)', () => {
    it('matches GitHub’s published test vector', () => {
      expect(specSignature("It's a Secret to Everybody", 'Hello, World!')).toBe(
        'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
      );
    });

    it('is sha256= + hex HMAC-SHA256 of the raw body keyed with the whole whsec_ string', () => {
      expect(specSignature(CURRENT, BODY)).toBe(`sha256=${hmacHex(CURRENT, BODY)}`);
      expect(specSignature(CURRENT, Buffer.from(BODY))).toBe(`sha256=${hmacHex(CURRENT, BODY)}`);
      // Not keyed with the decoded base64 part (that is the Standard Webhooks key).
      expect(specSignature(CURRENT, BODY)).not.toBe(`sha256=${hmacHex(keyOf(CURRENT), BODY)}`);
    });

    it('is verified by @octokit/webhooks-methods and equals its signature', async () => {
      const signature = specSignature(CURRENT, BODY);
      await expect(octokitVerify(CURRENT, BODY, signature)).resolves.toBe(true);
      await expect(octokitSign(CURRENT, BODY)).resolves.toBe(signature);
      await expect(octokitVerify(PREVIOUS, BODY, signature)).resolves.toBe(false);
    });
  });

  describe('standardSignature (webhook-signature)', () => {
    it('is v1, + base64 HMAC-SHA256 of id.timestamp.body keyed with the base64 part of the secret', () => {
      expect(standardSignature(CURRENT, 'msg_2', 1_700_000_123, BODY)).toBe(`v1,${hmacB64(keyOf(CURRENT), `msg_2.1700000123.${BODY}`)}`);
    });

    it('equals what standardwebhooks signs', () => {
      expect(standardSignature(PREVIOUS, 'msg_3', 1_700_000_456, BODY)).toBe(
        new Webhook(PREVIOUS).sign('msg_3', new Date(1_700_000_456_000), BODY),
      );
    });

    it('depends on the message id, the timestamp and the body', () => {
      const base = standardSignature(CURRENT, 'msg_4', 1_700_000_000, BODY);
      expect(standardSignature(CURRENT, 'msg_5', 1_700_000_000, BODY)).not.toBe(base);
      expect(standardSignature(CURRENT, 'msg_4', 1_700_000_001, BODY)).not.toBe(base);
      expect(standardSignature(CURRENT, 'msg_4', 1_700_000_000, `${BODY} `)).not.toBe(base);
    });
  });

  describe('signatureHeaders', () => {
    const now = () => Math.floor(Date.now() / 1000);

    it('without a previous secret: exactly the spec header and the three Standard Webhooks headers', () => {
      const ts = 1_700_000_000;
      expect(signatureHeaders({ current: CURRENT, previous: null }, 'msg_10', ts, BODY)).toEqual({
        'X-Service-Signature': `sha256=${hmacHex(CURRENT, BODY)}`,
        'webhook-id': 'msg_10',
        'webhook-timestamp': '1700000000',
        'webhook-signature': `v1,${hmacB64(keyOf(CURRENT), `msg_10.${ts}.${BODY}`)}`,
      });
    });

    it('during a rotation grace: the previous secret’s signature in X-Service-Signature-Previous and a second v1 entry', () => {
      const ts = 1_700_000_999;
      expect(signatureHeaders({ current: CURRENT, previous: PREVIOUS }, 'msg_11', ts, BODY)).toEqual({
        'X-Service-Signature': `sha256=${hmacHex(CURRENT, BODY)}`,
        'X-Service-Signature-Previous': `sha256=${hmacHex(PREVIOUS, BODY)}`,
        'webhook-id': 'msg_11',
        'webhook-timestamp': '1700000999',
        'webhook-signature': [
          `v1,${hmacB64(keyOf(CURRENT), `msg_11.${ts}.${BODY}`)}`,
          `v1,${hmacB64(keyOf(PREVIOUS), `msg_11.${ts}.${BODY}`)}`,
        ].join(' '),
      });
    });

    it('verify with standardwebhooks for the current secret, and for the previous one during the grace', () => {
      const ts = now();
      const rotated = signatureHeaders({ current: CURRENT, previous: PREVIOUS }, 'msg_12', ts, BODY);
      expect(new Webhook(CURRENT).verify(BODY, rotated)).toEqual(JSON.parse(BODY));
      expect(new Webhook(PREVIOUS).verify(BODY, rotated)).toEqual(JSON.parse(BODY));

      const settled = signatureHeaders({ current: CURRENT, previous: null }, 'msg_13', ts, BODY);
      expect(new Webhook(CURRENT).verify(BODY, settled)).toEqual(JSON.parse(BODY));
      expect(() => new Webhook(PREVIOUS).verify(BODY, settled)).toThrow('No matching signature found');
    });

    it('verify with @octokit/webhooks-methods: the spec header with the current secret, the previous header with the previous one', async () => {
      const headers = signatureHeaders({ current: CURRENT, previous: PREVIOUS }, 'msg_14', now(), BODY);
      await expect(octokitVerify(CURRENT, BODY, headers[SIGNATURE_HEADER])).resolves.toBe(true);
      await expect(octokitVerify(PREVIOUS, BODY, headers[PREVIOUS_SIGNATURE_HEADER])).resolves.toBe(true);
      await expect(octokitVerify(PREVIOUS, BODY, headers[SIGNATURE_HEADER])).resolves.toBe(false);
    });

    it('does not verify a re-serialised body', () => {
      const headers = signatureHeaders({ current: CURRENT, previous: null }, 'msg_15', now(), BODY);
      const reserialised = JSON.stringify(JSON.parse(BODY), null, 2);
      expect(() => new Webhook(CURRENT).verify(reserialised, headers)).toThrow('No matching signature found');
      expect(verifySpecSignature(CURRENT, Buffer.from(reserialised), headers[SIGNATURE_HEADER])).toBe(false);
    });
  });

  describe('verifySpecSignature (inbound)', () => {
    const body = Buffer.from(BODY);
    const good = `sha256=${hmacHex(CURRENT, body)}`;

    it('accepts the HMAC of the raw bytes with the secret', () => {
      expect(verifySpecSignature(CURRENT, body, good)).toBe(true);
    });

    it('accepts what @octokit/webhooks-methods signs', async () => {
      expect(verifySpecSignature(CURRENT, body, await octokitSign(CURRENT, BODY))).toBe(true);
    });

    it('refuses a missing (empty) header', () => {
      expect(verifySpecSignature(CURRENT, body, '')).toBe(false);
    });

    it('refuses the right hex without the sha256= prefix, or with another prefix', () => {
      const hex = good.slice('sha256='.length);
      expect(verifySpecSignature(CURRENT, body, hex)).toBe(false);
      expect(verifySpecSignature(CURRENT, body, `sha1=${hex}`)).toBe(false);
      expect(verifySpecSignature(CURRENT, body, `SHA256=${hex}`)).toBe(false);
      expect(verifySpecSignature(CURRENT, body, ` ${good}`)).toBe(false);
      // Same length as `sha256=` but not it: the prefix is compared, not only skipped.
      expect(verifySpecSignature(CURRENT, body, `sha512=${hex}`)).toBe(false);
    });

    it('refuses a signature of the wrong length, without throwing', () => {
      expect(verifySpecSignature(CURRENT, body, good.slice(0, -2))).toBe(false);
      expect(verifySpecSignature(CURRENT, body, `${good}00`)).toBe(false);
      expect(verifySpecSignature(CURRENT, body, 'sha256=')).toBe(false);
    });

    it('refuses a header that is not hex', () => {
      expect(verifySpecSignature(CURRENT, body, `sha256=${'zz'.repeat(32)}`)).toBe(false);
      expect(verifySpecSignature(CURRENT, body, `sha256=${Buffer.from(hmacHex(CURRENT, body), 'hex').toString('base64')}`)).toBe(false);
    });

    it('refuses a signature with one byte changed', () => {
      const last = good.slice(-2) === '00' ? '01' : '00';
      expect(verifySpecSignature(CURRENT, body, `${good.slice(0, -2)}${last}`)).toBe(false);
    });

    it('refuses a signature made with another secret, or keyed with the decoded Standard Webhooks key', () => {
      expect(verifySpecSignature(PREVIOUS, body, good)).toBe(false);
      expect(verifySpecSignature(CURRENT, body, `sha256=${hmacHex(keyOf(CURRENT), body)}`)).toBe(false);
    });

    it('refuses a signature of a re-serialised body', () => {
      const reserialised = Buffer.from(JSON.stringify(JSON.parse(BODY)).replace(':', ': '));
      expect(verifySpecSignature(CURRENT, reserialised, good)).toBe(false);
    });
  });

  describe('redactHeaders', () => {
    it('replaces every signature and authorization header, whatever its case, and keeps the rest', () => {
      const headers = signatureHeaders({ current: CURRENT, previous: PREVIOUS }, 'msg_20', 1_700_000_000, BODY);
      expect(
        redactHeaders({
          ...headers,
          Authorization: 'Bearer t',
          'proxy-AUTHORIZATION': 'Basic x',
          'x-signature-256': 'sha256=00',
          'content-type': 'application/json',
        }),
      ).toEqual({
        'X-Service-Signature': '[redacted]',
        'X-Service-Signature-Previous': '[redacted]',
        'webhook-signature': '[redacted]',
        'webhook-id': 'msg_20',
        'webhook-timestamp': '1700000000',
        Authorization: '[redacted]',
        'proxy-AUTHORIZATION': '[redacted]',
        'x-signature-256': '[redacted]',
        'content-type': 'application/json',
      });
    });

    it('leaves the input untouched', () => {
      const headers = { Authorization: 'Bearer t' };
      redactHeaders(headers);
      expect(headers).toEqual({ Authorization: 'Bearer t' });
    });
  });
});
