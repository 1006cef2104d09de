import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { ProblemError } from '../../src/common/errors/problem-error';
import { CONSOLE_AUDIENCE, PLATFORM_AUDIENCE, PlatformTokens } from '../../src/modules/providers/auth/platform-tokens';
import { fakeClock, ISSUER, signingKeys, TestKey, testKey, tokenConfig } from './signing-keys.fixture';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const NOW_S = NOW / 1000;
const IN_AN_HOUR = new Date(NOW + 3_600_000);
const INVALID = {
  code: 'invalid_token',
  status: 401,
  detail: 'The bearer token is not valid',
  extras: {},
  headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
};
const EXPIRED = {
  code: 'token_expired',
  status: 401,
  detail: 'The access token has expired; obtain a new one',
  extras: {},
  headers: { 'WWW-Authenticate': 'Bearer error="invalid_token", error_description="token expired"' },
};

let key: TestKey;
let other: TestKey;
let tokens: PlatformTokens;

beforeAll(async () => {
  [key, other] = await Promise.all([testKey(), testKey()]);
});

beforeEach(() => {
  fakeClock(NOW);
  tokens = new PlatformTokens(tokenConfig, signingKeys(key));
});

afterEach(() => jest.useRealTimers());

/** A token signed by hand, for shapes `forDeveloper` and `forApp` never make. */
function handMade(
  claims: Record<string, unknown>,
  {
    signer = key,
    kid = signer.kid,
    issuer = ISSUER,
    audience = PLATFORM_AUDIENCE,
    exp = NOW_S + 3600,
  }: { signer?: TestKey; kid?: string; issuer?: string; audience?: string | string[]; exp?: number | null } = {},
): Promise<string> {
  let jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', ...(kid ? { kid } : {}) })
    .setIssuer(issuer)
    .setAudience(audience);
  if (exp !== null) jwt = jwt.setExpirationTime(exp);
  return jwt.sign(signer.privateKey);
}

const appClaims = { sub: 'app_1', dev: 'dev_1', scope: 'packages:read packages:write' };

async function problem(token: string) {
  const error = await tokens.verify(token).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProblemError);
  const { code, status, detail, extras, headers } = error as ProblemError;
  return { code, status, detail, extras, headers };
}

describe('provider platform tokens', () => {
  describe('audiences', () => {
    it('are the documented ones', () => {
      expect(CONSOLE_AUDIENCE).toBe('provider-console');
      expect(PLATFORM_AUDIENCE).toBe('provider-platform');
    });
  });

  it('reports the configured lifetime of app tokens', () => {
    expect(tokens.ttlSeconds).toBe(900);
  });

  describe('developer console tokens', () => {
    it('are ES256 JWTs for the console audience carrying the developer and session', async () => {
      const token = await tokens.forDeveloper('dev_1', 'ses_1', IN_AN_HOUR);
      expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: key.kid, typ: 'JWT' });
      expect(decodeJwt(token)).toEqual({ iss: ISSUER, aud: 'provider-console', sub: 'dev_1', sid: 'ses_1', iat: NOW_S, exp: NOW_S + 3600 });
    });

    it('verify to exactly the developer principal’s claims', async () => {
      const claims = await tokens.verify(await tokens.forDeveloper('dev_1', 'ses_1', new Date(NOW + 1_999)));
      expect(claims).toStrictEqual({ kind: 'developer', developerId: 'dev_1', sessionId: 'ses_1', exp: NOW_S + 1 });
    });

    it('are invalid without a session id', async () => {
      expect(await problem(await handMade({ sub: 'dev_1' }, { audience: CONSOLE_AUDIENCE }))).toEqual(INVALID);
    });

    it('are invalid with a numeric session id', async () => {
      expect(await problem(await handMade({ sub: 'dev_1', sid: 5 }, { audience: CONSOLE_AUDIENCE }))).toEqual(INVALID);
    });

    it('are not app tokens even when they carry dev and scope', async () => {
      expect(await problem(await handMade({ ...appClaims }, { audience: CONSOLE_AUDIENCE }))).toEqual(INVALID);
    });
  });

  describe('app tokens', () => {
    it('are ES256 JWTs for the platform audience carrying the developer and space-separated scopes', async () => {
      const token = await tokens.forApp({ id: 'app_1', developerId: 'dev_1' }, ['packages:read', 'apps:read'], IN_AN_HOUR);
      expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: key.kid, typ: 'JWT' });
      expect(decodeJwt(token)).toEqual({
        iss: ISSUER,
        aud: 'provider-platform',
        sub: 'app_1',
        dev: 'dev_1',
        scope: 'packages:read apps:read',
        iat: NOW_S,
        exp: NOW_S + 3600,
      });
    });

    it('verify to the app, its developer and scopes, with no delegation and no secret generation', async () => {
      const claims = await tokens.verify(
        await tokens.forApp({ id: 'app_1', developerId: 'dev_1' }, ['packages:read', 'apps:read'], IN_AN_HOUR),
      );
      expect(claims).toStrictEqual({
        kind: 'app',
        appId: 'app_1',
        developerId: 'dev_1',
        scopes: ['packages:read', 'apps:read'],
        userId: undefined,
        installId: undefined,
        secretGeneration: undefined,
        exp: NOW_S + 3600,
      });
    });

    it('carry the user and install of a delegation as uid and iid', async () => {
      const token = await tokens.forApp({ id: 'app_1', developerId: 'dev_1' }, ['capabilities:execute'], IN_AN_HOUR, {
        delegation: { userId: 'usr_1', installId: 'inst_1' },
      });
      expect(decodeJwt(token)).toMatchObject({ uid: 'usr_1', iid: 'inst_1' });
      expect(decodeJwt(token)).not.toHaveProperty('sgen');
      expect(await tokens.verify(token)).toMatchObject({ kind: 'app', userId: 'usr_1', installId: 'inst_1', secretGeneration: undefined });
    });

    it('carry the client secret generation as sgen, generation 0 included', async () => {
      for (const generation of [0, 3]) {
        const token = await tokens.forApp({ id: 'app_1', developerId: 'dev_1' }, [], IN_AN_HOUR, { secretGeneration: generation });
        expect(decodeJwt(token).sgen).toBe(generation);
        expect(decodeJwt(token)).not.toHaveProperty('uid');
        expect(await tokens.verify(token)).toMatchObject({ secretGeneration: generation, userId: undefined });
      }
    });

    it('with no scopes verify to an empty scope list, not one empty scope', async () => {
      const token = await tokens.forApp({ id: 'app_1', developerId: 'dev_1' }, [], IN_AN_HOUR);
      expect(decodeJwt(token).scope).toBe('');
      expect(await tokens.verify(token)).toMatchObject({ scopes: [] });
    });

    it('ignore empty entries between scopes', async () => {
      expect(await tokens.verify(await handMade({ ...appClaims, scope: ' packages:read  apps:read ' }))).toMatchObject({
        scopes: ['packages:read', 'apps:read'],
      });
    });

    it.each([
      ['a uid that is not a string', { uid: 7, iid: 'inst_1' }, { userId: undefined, installId: 'inst_1' }],
      ['an iid that is not a string', { uid: 'usr_1', iid: 7 }, { userId: 'usr_1', installId: undefined }],
      ['a fractional sgen', { sgen: 1.5 }, { secretGeneration: undefined }],
      ['a string sgen', { sgen: '2' }, { secretGeneration: undefined }],
    ])('ignore %s', async (_name, extra, expected) => {
      expect(await tokens.verify(await handMade({ ...appClaims, ...extra }))).toMatchObject(expected);
    });

    it('read the first audience when the token lists several', async () => {
      expect(await tokens.verify(await handMade(appClaims, { audience: [PLATFORM_AUDIENCE, 'elsewhere'] }))).toMatchObject({ kind: 'app' });
      expect(await problem(await handMade(appClaims, { audience: ['elsewhere', PLATFORM_AUDIENCE] }))).toEqual(INVALID);
    });

    it.each([
      ['no developer', { sub: 'app_1', scope: 'packages:read' }],
      ['a numeric developer', { sub: 'app_1', dev: 1, scope: 'packages:read' }],
      ['no scope claim', { sub: 'app_1', dev: 'dev_1' }],
      ['scopes as an array', { sub: 'app_1', dev: 'dev_1', scope: ['packages:read'] }],
      ['no subject', { dev: 'dev_1', scope: 'packages:read' }],
    ])('are invalid with %s', async (_name, claims) => {
      expect(await problem(await handMade(claims))).toEqual(INVALID);
    });

    it('are not console tokens even when they carry a session id', async () => {
      expect(await problem(await handMade({ sub: 'dev_1', sid: 'ses_1' }))).toEqual(INVALID);
    });
  });

  describe('refusals', () => {
    it.each([
      ['not a JWT', 'not-a-token'],
      ['an empty string', ''],
    ])('answer %s with invalid_token', async (_name, token) => {
      expect(await problem(token)).toEqual(INVALID);
    });

    it('answer a token without an expiry with invalid_token', async () => {
      expect(await problem(await handMade(appClaims, { exp: null }))).toEqual(INVALID);
    });

    it('answer an unknown kid with invalid_token', async () => {
      expect(await problem(await handMade(appClaims, { signer: other }))).toEqual(INVALID);
    });

    it('answer a token without a kid with invalid_token', async () => {
      expect(await problem(await handMade(appClaims, { kid: '' }))).toEqual(INVALID);
    });

    it('answer a forged signature under a trusted kid with invalid_token', async () => {
      expect(await problem(await handMade(appClaims, { signer: other, kid: key.kid }))).toEqual(INVALID);
    });

    it('answer another issuer with invalid_token', async () => {
      expect(await problem(await handMade(appClaims, { issuer: 'https://elsewhere.test' }))).toEqual(INVALID);
    });

    it('answer a user access token (audience user-api) with invalid_token', async () => {
      expect(await problem(await handMade({ sub: 'usr_1', sid: 'ses_1' }, { audience: 'user-api' }))).toEqual(INVALID);
    });

    it('answer an expired token with token_expired and its own challenge', async () => {
      expect(await problem(await tokens.forDeveloper('dev_1', 'ses_1', new Date(NOW - 1_000)))).toEqual(EXPIRED);
    });

    it('answer a token signed by a key still trusted but not signing', async () => {
      const withBoth = new PlatformTokens(tokenConfig, signingKeys(key, other));
      expect(await withBoth.verify(await handMade(appClaims, { signer: other }))).toMatchObject({ kind: 'app', appId: 'app_1' });
    });
  });

  describe('verified tokens remembered until their exp', () => {
    it('answer the same token again with the same frozen claims and frozen scopes', async () => {
      const token = await tokens.forApp({ id: 'app_1', developerId: 'dev_1' }, ['packages:read'], IN_AN_HOUR);
      const first = await tokens.verify(token);
      expect(Object.isFrozen(first)).toBe(true);
      expect(first.kind === 'app' && Object.isFrozen(first.scopes)).toBe(true);
      expect(await tokens.verify(token)).toBe(first);
    });

    it('freeze developer claims too', async () => {
      expect(Object.isFrozen(await tokens.verify(await tokens.forDeveloper('dev_1', 'ses_1', IN_AN_HOUR)))).toBe(true);
    });

    it('refuse a remembered token once it has expired, at its exp to the second', async () => {
      const token = await tokens.forDeveloper('dev_1', 'ses_1', new Date(NOW + 60_000));
      const first = await tokens.verify(token);
      jest.setSystemTime(NOW + 59_999);
      expect(await tokens.verify(token)).toBe(first);
      jest.setSystemTime(NOW + 60_000);
      expect(await problem(token)).toEqual(EXPIRED);
    });

    it('forget an expired token instead of answering it again from memory', async () => {
      const token = await tokens.forDeveloper('dev_1', 'ses_1', new Date(NOW + 60_000));
      const first = await tokens.verify(token);
      jest.setSystemTime(NOW + 61_000);
      await problem(token);
      jest.setSystemTime(NOW);
      const again = await tokens.verify(token);
      expect(again).toStrictEqual(first);
      expect(again).not.toBe(first);
    });
  });
});
