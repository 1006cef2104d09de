import { decodeProtectedHeader, errors, exportJWK, generateKeyPair, jwtVerify, createLocalJWKSet } from 'jose';
import type { AppConfig } from '../../src/config/app-config';
import { RuntimeCall, runtimeCallHeaders, RUNTIME_TOKEN_TTL_SECONDS, RuntimeTokens } from '../../src/modules/access/runtime-tokens';
import type { SigningKeys } from '../../src/modules/access/signing-keys.service';

const ISSUER = 'https://service.test';
const call: RuntimeCall = {
  appId: 'app_a',
  userId: 'usr_1',
  installId: 'inst_1',
  requestId: 'req_1',
  scopes: ['capabilities:execute'],
  livemode: true,
};

describe('RuntimeTokens', () => {
  let tokens: RuntimeTokens;
  let jwks: ReturnType<typeof createLocalJWKSet>;

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    jwks = createLocalJWKSet({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] });
    tokens = new RuntimeTokens({ publicBaseUrl: ISSUER } as AppConfig, { signing: { kid: 'k1', privateKey } } as unknown as SigningKeys);
  });

  const verify = (token: string, audience = 'app_a') =>
    jwtVerify(token, jwks, { issuer: ISSUER, audience, typ: 'runtime+jwt', algorithms: ['ES256'] });

  it('mints a runtime+jwt for the app, the install, the user and the request, verifiable as docs/runtime-auth.md says', async () => {
    const token = await tokens.mint(call);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: 'k1', typ: 'runtime+jwt' });
    const { payload } = await verify(token);
    expect(payload).toEqual({
      iss: ISSUER,
      aud: 'app_a',
      sub: 'usr_1',
      uid: 'usr_1',
      iid: 'inst_1',
      rid: 'req_1',
      scope: 'capabilities:execute',
      livemode: true,
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
      iat: expect.any(Number),
      exp: (payload.iat as number) + RUNTIME_TOKEN_TTL_SECONDS,
    });
    expect(RUNTIME_TOKEN_TTL_SECONDS).toBe(300);
  });

  it('gives every token its own jti, and marks test traffic livemode false', async () => {
    const [a, b] = await Promise.all([tokens.mint(call), tokens.mint(call)]);
    expect((await verify(a)).payload.jti).not.toBe((await verify(b)).payload.jti);
    const test = await tokens.mint({ ...call, livemode: false, scopes: [] });
    expect((await verify(test)).payload).toMatchObject({ livemode: false, scope: '' });
  });

  it('is refused for another audience, and as expired when backdated past its lifetime', async () => {
    await expect(verify(await tokens.mint(call), 'app_b')).rejects.toBeInstanceOf(errors.JWTClaimValidationFailed);
    const old = await tokens.mint(call, { issuedAt: new Date(Date.now() - (RUNTIME_TOKEN_TTL_SECONDS + 60) * 1000) });
    await expect(verify(old)).rejects.toBeInstanceOf(errors.JWTExpired);
  });

  it('puts the token, the request id and the mode in the call headers', async () => {
    expect(runtimeCallHeaders('t0k', 'req_9', false)).toEqual({
      Authorization: 'Bearer t0k',
      'X-Service-Request-Id': 'req_9',
      'X-Service-Livemode': 'false',
    });
    const headers = await tokens.headers(call);
    expect(headers['X-Service-Livemode']).toBe('true');
    expect((await verify(headers.Authorization.replace('Bearer ', ''))).payload.rid).toBe('req_1');
  });
});
