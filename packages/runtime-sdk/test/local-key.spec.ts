import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, JSONWebKeySet, KeyLike, SignJWT } from 'jose';
import { LOCAL_JWKS_ENV, LOCAL_TOKEN_ISSUER, RuntimeError, RuntimeTokenVerifier } from '../src';
import { RuntimeTestKit } from '../src/testing';

/**
 * The CLI's local key (soul conformance --url): trusted only when given, never in production, and only for
 * test traffic; the service's own tokens keep working beside it.
 */
describe('RuntimeTokenVerifier and the CLI local key', () => {
  const appId = 'app_local';
  let kit: RuntimeTestKit;
  let localPrivate: KeyLike;
  let localJwks: JSONWebKeySet;
  const kid = `local-${randomUUID()}`;

  beforeAll(async () => {
    kit = await RuntimeTestKit.create({ appId });
    const pair = await generateKeyPair('ES256', { extractable: true });
    localPrivate = pair.privateKey;
    localJwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid, alg: 'ES256', use: 'sig' }] };
  });

  const localToken = (livemode: boolean, requestId: string, issuer = LOCAL_TOKEN_ISSUER) =>
    new SignJWT({ uid: 'usr_test1', iid: 'inst_test1', rid: requestId, scope: '', livemode })
      .setProtectedHeader({ alg: 'ES256', kid, typ: 'runtime+jwt' })
      .setIssuer(issuer)
      .setAudience(appId)
      .setSubject('usr_test1')
      .setJti(randomUUID())
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(localPrivate);
  const headers = async (livemode: boolean, issuer?: string) => {
    const requestId = `req_${randomUUID().replace(/-/g, '')}`;
    return {
      authorization: `Bearer ${await localToken(livemode, requestId, issuer)}`,
      'x-service-request-id': requestId,
      'x-service-livemode': String(livemode),
    };
  };
  const verifier = (localKeys?: JSONWebKeySet) =>
    new RuntimeTokenVerifier({ serviceUrl: kit.serviceUrl, appId, keys: kit.jwks, localKeys });
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (error: unknown) => (error instanceof RuntimeError ? { code: error.code, message: error.message } : error),
    );

  it('accepts test traffic signed by the local key when given the key set, and the service’s tokens beside it', async () => {
    const trusting = verifier(localJwks);
    expect(trusting.trustsLocalKey).toBe(true);
    await expect(trusting.verify(await headers(false))).resolves.toMatchObject({ userId: 'usr_test1', livemode: false });
    const service = await kit.headers('state');
    await expect(trusting.verify(service)).resolves.toMatchObject({ livemode: true });
  });

  it('refuses a local token that claims live traffic', async () => {
    expect(await refusal(verifier(localJwks).verify(await headers(true)))).toMatchObject({
      code: 'AUTH_INVALID',
      message: expect.stringContaining('test traffic only'),
    });
  });

  it('refuses local tokens when the key set was not given', async () => {
    expect(verifier().trustsLocalKey).toBe(false);
    expect(await refusal(verifier().verify(await headers(false)))).toMatchObject({ code: 'AUTH_INVALID' });
  });

  it('refuses the local key’s signature under the service’s issuer (the key never stands for the service)', async () => {
    expect(await refusal(verifier(localJwks).verify(await headers(false, kit.serviceUrl)))).toMatchObject({ code: 'AUTH_INVALID' });
  });

  describe('from SOUL_LOCAL_JWKS', () => {
    const saved = { path: process.env[LOCAL_JWKS_ENV], nodeEnv: process.env.NODE_ENV };
    let file: string;
    beforeAll(() => {
      file = join(mkdtempSync(join(tmpdir(), 'sdk-local-key-')), 'local-jwks.json');
      writeFileSync(file, JSON.stringify(localJwks));
    });
    afterEach(() => {
      process.env[LOCAL_JWKS_ENV] = saved.path;
      if (saved.path === undefined) delete process.env[LOCAL_JWKS_ENV];
      process.env.NODE_ENV = saved.nodeEnv;
    });

    it('reads the key set from the file the variable names', async () => {
      process.env[LOCAL_JWKS_ENV] = file;
      await expect(verifier().verify(await headers(false))).resolves.toMatchObject({ livemode: false });
    });

    it('never trusts it in production, even when given', async () => {
      process.env[LOCAL_JWKS_ENV] = file;
      process.env.NODE_ENV = 'production';
      expect(verifier().trustsLocalKey).toBe(false);
      expect(verifier(localJwks).trustsLocalKey).toBe(false);
      expect(await refusal(verifier().verify(await headers(false)))).toMatchObject({ code: 'AUTH_INVALID' });
    });

    it('fails at start, naming the variable, when the file cannot be read', () => {
      process.env[LOCAL_JWKS_ENV] = join(tmpdir(), 'no-such-dir', 'local-jwks.json');
      expect(() => verifier()).toThrow(/SOUL_LOCAL_JWKS=.*cannot read/);
    });
  });
});
