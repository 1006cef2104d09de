import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type KeyLike } from 'jose';
import type { RuntimeCall, RuntimeTokenPort } from '@soul-service/rules';
import { configDir } from './credentials';

/**
 * The issuer of locally minted runtime tokens; the runtime SDK trusts it only with the key set below given
 * (SOUL_LOCAL_JWKS), outside production and for test traffic. Kept equal to the SDK's LOCAL_TOKEN_ISSUER
 * (the local-conformance e2e test fails otherwise).
 */
export const LOCAL_TOKEN_ISSUER = 'urn:soul-service:cli-local';
/** As the service's runtime tokens: `runtime+jwt`, ES256, five minutes. */
const RUNTIME_TOKEN_TYPE = 'runtime+jwt';
const RUNTIME_TOKEN_TTL_SECONDS = 300;

interface StoredKey {
  kid: string;
  privateJwk: JWK;
}

export function localJwksPath(env: Record<string, string | undefined>): string {
  return join(configDir(env), 'local-jwks.json');
}

function writePrivately(path: string, text: string, mode: number): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode });
  chmodSync(temporary, mode);
  renameSync(temporary, path);
}

/**
 * The CLI's local signing key: made on first use, kept in the config directory (the private key 0600, its
 * public JWKS beside it for the runtime to trust). It signs only what the CLI itself sends to a runtime on
 * this machine; the service never sees it.
 */
export class LocalKey implements RuntimeTokenPort {
  private constructor(
    private readonly kid: string,
    private readonly privateKey: KeyLike | Uint8Array,
  ) {}

  static async load(env: Record<string, string | undefined>): Promise<{ key: LocalKey; jwksPath: string }> {
    const dir = configDir(env);
    const keyPath = join(dir, 'local-key.json');
    const jwksPath = localJwksPath(env);
    let stored: StoredKey | null = null;
    try {
      stored = JSON.parse(readFileSync(keyPath, 'utf8')) as StoredKey;
      readFileSync(jwksPath);
    } catch {
      stored = null;
    }
    if (!stored) {
      const pair = await generateKeyPair('ES256', { extractable: true });
      const kid = `local-${randomUUID()}`;
      const privateJwk = { ...(await exportJWK(pair.privateKey)), kid, alg: 'ES256' };
      const publicJwk = { ...(await exportJWK(pair.publicKey)), kid, alg: 'ES256', use: 'sig' };
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writePrivately(keyPath, `${JSON.stringify({ kid, privateJwk }, null, 2)}\n`, 0o600);
      writePrivately(jwksPath, `${JSON.stringify({ keys: [publicJwk] }, null, 2)}\n`, 0o644);
      stored = { kid, privateJwk };
    }
    return { key: new LocalKey(stored.kid, await importJWK(stored.privateJwk, 'ES256')), jwksPath };
  }

  /** A runtime token with the service's claims (docs/runtime-auth.md), issued by the local issuer; always test traffic. */
  async mint(call: RuntimeCall, options: { issuedAt?: Date } = {}): Promise<string> {
    const iat = Math.floor((options.issuedAt ?? new Date()).getTime() / 1000);
    return new SignJWT({ uid: call.userId, iid: call.installId, rid: call.requestId, scope: call.scopes.join(' '), livemode: false })
      .setProtectedHeader({ alg: 'ES256', kid: this.kid, typ: RUNTIME_TOKEN_TYPE })
      .setIssuer(LOCAL_TOKEN_ISSUER)
      .setAudience(call.appId)
      .setSubject(call.userId)
      .setJti(randomUUID())
      .setIssuedAt(iat)
      .setExpirationTime(iat + RUNTIME_TOKEN_TTL_SECONDS)
      .sign(this.privateKey);
  }
}
