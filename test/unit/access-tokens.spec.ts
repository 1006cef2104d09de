import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { ACCESS_TOKEN_AUDIENCE, AccessTokens, InvalidAccessToken } from '../../src/modules/access/access-tokens';
import { fakeClock, ISSUER, signingKeys, TestKey, testKey, tokenConfig } from './signing-keys.fixture';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const IN_AN_HOUR = new Date(NOW + 3_600_000);

let key: TestKey;
let other: TestKey;
let tokens: AccessTokens;

beforeAll(async () => {
  [key, other] = await Promise.all([testKey(), testKey()]);
});

beforeEach(() => {
  fakeClock(NOW);
  tokens = new AccessTokens(tokenConfig, signingKeys(key));
});

afterEach(() => jest.useRealTimers());

/** A token signed by hand, for the shapes `issue` never makes. */
function handMade(
  claims: Record<string, unknown>,
  {
    signer = key,
    kid = signer.kid,
    issuer = ISSUER,
    audience = ACCESS_TOKEN_AUDIENCE,
    exp = Math.floor(IN_AN_HOUR.getTime() / 1000),
  }: { signer?: TestKey; kid?: string; issuer?: string; audience?: string; exp?: number | null } = {},
): Promise<string> {
  let jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', ...(kid ? { kid } : {}) })
    .setIssuer(issuer)
    .setAudience(audience);
  if (exp !== null) jwt = jwt.setExpirationTime(exp);
  return jwt.sign(signer.privateKey);
}

async function reason(token: string): Promise<string> {
  const error = await tokens.verify(token).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidAccessToken);
  return (error as InvalidAccessToken).reason;
}

describe('user access tokens', () => {
  describe('issue', () => {
    it('signs an ES256 JWT named by the key id, for the user API audience, from this service', async () => {
      const token = await tokens.issue('usr_1', 'ses_1', IN_AN_HOUR);
      expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: key.kid, typ: 'JWT' });
      expect(decodeJwt(token)).toEqual({
        iss: ISSUER,
        aud: 'user-api',
        sub: 'usr_1',
        sid: 'ses_1',
        iat: NOW / 1000,
        exp: NOW / 1000 + 3600,
      });
    });

    it('expires at the whole second of the session’s end, rounded down', async () => {
      const token = await tokens.issue('usr_1', 'ses_1', new Date(NOW + 1_999));
      expect(decodeJwt(token).exp).toBe(NOW / 1000 + 1);
    });

    it('uses the public base URL as its issuer', () => {
      expect(tokens.issuer).toBe(ISSUER);
    });
  });

  describe('verify', () => {
    it('returns exactly the user, session and expiry of a token it issued', async () => {
      const claims = await tokens.verify(await tokens.issue('usr_1', 'ses_1', IN_AN_HOUR));
      expect(claims).toStrictEqual({ sub: 'usr_1', sid: 'ses_1', exp: NOW / 1000 + 3600 });
      expect(Object.isFrozen(claims)).toBe(true);
    });

    it('accepts a token signed with another key it still trusts (a key being retired)', async () => {
      const withBoth = new AccessTokens(tokenConfig, signingKeys(key, other));
      const claims = await withBoth.verify(await handMade({ sub: 'usr_2', sid: 'ses_2' }, { signer: other }));
      expect(claims).toMatchObject({ sub: 'usr_2', sid: 'ses_2' });
    });

    it.each([
      ['not a JWT at all', 'not-a-token'],
      ['an empty string', ''],
      ['a header that is not JSON', 'e30x.e30.sig'],
    ])('refuses %s as malformed', async (_name, token) => {
      expect(await reason(token)).toBe('malformed');
    });

    it('refuses a token whose kid this service never had as unknown_key', async () => {
      expect(await reason(await handMade({ sub: 'usr_1', sid: 'ses_1' }, { signer: other }))).toBe('unknown_key');
    });

    it('refuses a token without a kid as unknown_key', async () => {
      expect(await reason(await handMade({ sub: 'usr_1', sid: 'ses_1' }, { kid: '' }))).toBe('unknown_key');
    });

    it('refuses a token signed by another key under a trusted kid as invalid', async () => {
      expect(await reason(await handMade({ sub: 'usr_1', sid: 'ses_1' }, { signer: other, kid: key.kid }))).toBe('invalid');
    });

    it('refuses a token signed with a shared secret (HS256) under a trusted kid as invalid', async () => {
      const hs = await new SignJWT({ sub: 'usr_1', sid: 'ses_1' })
        .setProtectedHeader({ alg: 'HS256', kid: key.kid })
        .setIssuer(ISSUER)
        .setAudience(ACCESS_TOKEN_AUDIENCE)
        .setExpirationTime('1h')
        .sign(new Uint8Array(32));
      expect(await reason(hs)).toBe('invalid');
    });

    it('refuses a token from another issuer as invalid', async () => {
      expect(await reason(await handMade({ sub: 'usr_1', sid: 'ses_1' }, { issuer: 'https://elsewhere.test' }))).toBe('invalid');
    });

    it('refuses a provider platform token (another audience) as invalid', async () => {
      expect(await reason(await handMade({ sub: 'usr_1', sid: 'ses_1' }, { audience: 'provider-console' }))).toBe('invalid');
    });

    it('refuses an expired token as expired', async () => {
      const token = await tokens.issue('usr_1', 'ses_1', new Date(NOW - 1_000));
      expect(await reason(token)).toBe('expired');
    });

    it.each([
      ['no session id', { sub: 'usr_1' }, {}],
      ['a numeric session id', { sub: 'usr_1', sid: 7 }, {}],
      ['no subject', { sid: 'ses_1' }, {}],
      ['no expiry', { sub: 'usr_1', sid: 'ses_1' }, { exp: null }],
    ])('refuses a signed token with %s as claims', async (_name, claims, options) => {
      expect(await reason(await handMade(claims, options))).toBe('claims');
    });

    it('keeps only sub, sid and exp of a verified token', async () => {
      const claims = await tokens.verify(await handMade({ sub: 'usr_1', sid: 'ses_1', role: 'admin' }));
      expect(Object.keys(claims).sort()).toEqual(['exp', 'sid', 'sub']);
    });
  });

  describe('InvalidAccessToken', () => {
    it('names its reason', () => {
      const error = new InvalidAccessToken('expired');
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe('InvalidAccessToken');
      expect(error.message).toBe('access token refused: expired');
      expect(error.reason).toBe('expired');
    });
  });

  describe('verified tokens remembered until their exp', () => {
    it('answers a second verify of the same token with the same frozen claims', async () => {
      const token = await tokens.issue('usr_1', 'ses_1', IN_AN_HOUR);
      const first = await tokens.verify(token);
      expect(tokens.recall(token)).toBe(first);
      expect(await tokens.verify(token)).toBe(first);
    });

    it('answers verify from memory for a token remembered by the HTTP guard', async () => {
      const remembered = tokens.remember('opaque', { sub: 'usr_9', sid: 'ses_9', exp: NOW / 1000 + 60 });
      expect(await tokens.verify('opaque')).toBe(remembered);
    });

    it('remembers a frozen copy holding only sub, sid and exp', () => {
      const payload = { sub: 'usr_1', sid: 'ses_1', exp: NOW / 1000 + 60, extra: true };
      const claims = tokens.remember('t', payload);
      expect(claims).toStrictEqual({ sub: 'usr_1', sid: 'ses_1', exp: NOW / 1000 + 60 });
      expect(claims).not.toBe(payload);
      expect(Object.isFrozen(claims)).toBe(true);
      expect(tokens.recall('t')).toBe(claims);
    });

    it('recalls nothing for a token never verified', () => {
      expect(tokens.recall('never-seen')).toBeUndefined();
    });

    it('forgets a remembered token at its exp, to the second', () => {
      tokens.remember('t', { sub: 'usr_1', sid: 'ses_1', exp: NOW / 1000 + 1 });
      jest.setSystemTime(NOW + 999);
      expect(tokens.recall('t')).toMatchObject({ sub: 'usr_1' });
      jest.setSystemTime(NOW + 1_000);
      expect(tokens.recall('t')).toBeUndefined();
      // Forgotten, not merely hidden: even a clock set back finds nothing.
      jest.setSystemTime(NOW);
      expect(tokens.recall('t')).toBeUndefined();
    });

    it('gives the precise refusal once a remembered token has expired', async () => {
      const token = await tokens.issue('usr_1', 'ses_1', new Date(NOW + 60_000));
      await tokens.verify(token);
      jest.setSystemTime(NOW + 61_000);
      expect(await reason(token)).toBe('expired');
    });
  });
});
