import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, JWK, KeyLike, SignJWT } from 'jose';

export const IDP_PROJECT = 'test-project';
export const IDP_ISSUER = `https://securetoken.google.com/${IDP_PROJECT}`;

interface SigningKey {
  kid: string;
  privateKey: KeyLike;
  publicJwk: JWK;
}

async function newKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

export interface TokenOptions {
  sub?: string;
  name?: string;
  email?: string;
  /** The `email_verified` claim (Firebase sets it on every token with an email): true unless set. */
  emailVerified?: boolean;
  issuer?: string;
  audience?: string;
  expiresInSeconds?: number;
  issuedAt?: number;
  authTime?: number | null;
  kid?: string;
  /** Sign with a key the JWKS does not publish. */
  unpublishedKey?: boolean;
}

/**
 * A real identity provider on loopback: an HTTP JWKS endpoint shaped like
 * Google's securetoken keys, and a signer of Firebase-style RS256 ID tokens.
 */
export class TestIdentityProvider {
  private server: Server;
  private published: SigningKey[] = [];
  private unpublished: SigningKey;
  jwksRequests = 0;
  jwksUrl = '';

  static async start(): Promise<TestIdentityProvider> {
    const idp = new TestIdentityProvider();
    idp.published = [await newKey('key-1')];
    idp.unpublished = await newKey('rogue');
    idp.server = createServer((req, res) => {
      if (req.url === '/jwks') {
        idp.jwksRequests += 1;
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, max-age=3600' });
        res.end(JSON.stringify({ keys: idp.published.map((k) => k.publicJwk) }));
        return;
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => idp.server.listen(0, '127.0.0.1', resolve));
    idp.jwksUrl = `http://127.0.0.1:${(idp.server.address() as AddressInfo).port}/jwks`;
    return idp;
  }

  /** Environment that points the service at this provider. */
  get env(): Record<string, string> {
    return { IDP_JWKS_URL: this.jwksUrl, IDP_PROJECT_ID: IDP_PROJECT, IDP_JWKS_COOLDOWN_SECONDS: '0' };
  }

  /** Publishes a new key (the old one stays published), as providers do when rotating. */
  async rotate(kid: string): Promise<void> {
    this.published.push(await newKey(kid));
  }

  async token(options: TokenOptions = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const key = options.unpublishedKey
      ? this.unpublished
      : (this.published.find((k) => k.kid === options.kid) ?? this.published[this.published.length - 1]);
    const claims: Record<string, unknown> = {
      name: options.name ?? 'Ada Lovelace',
      email: options.email ?? 'ada@example.com',
      email_verified: options.emailVerified ?? true,
    };
    const authTime = options.authTime === undefined ? now - 60 : options.authTime;
    if (authTime !== null) claims.auth_time = authTime;
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
      .setIssuer(options.issuer ?? IDP_ISSUER)
      .setAudience(options.audience ?? IDP_PROJECT)
      .setIssuedAt(options.issuedAt ?? now - 5)
      .setExpirationTime((options.issuedAt ?? now) + (options.expiresInSeconds ?? 3600));
    if (options.sub !== '') jwt.setSubject(options.sub ?? 'firebase-uid-ada');
    return jwt.sign(key.privateKey);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
