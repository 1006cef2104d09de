import { Inject, Injectable } from '@nestjs/common';
import { decodeProtectedHeader, errors, jwtVerify, SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { SigningKeys, TOKEN_ALGORITHM } from './signing-keys.service';

export const ACCESS_TOKEN_AUDIENCE = 'user-api';
export const ACCESS_TOKEN_TTL_SECONDS = 3600;
/** Verified tokens remembered per process (about 0.5 KB each). */
const VERIFIED_TOKENS_KEPT = 10_000;

export interface AccessTokenClaims {
  /** User id. */
  sub: string;
  /** Session id. */
  sid: string;
  exp: number;
}

/** Why a bearer token was refused; the callers word it for their channel (HTTP envelope, WebSocket close reason). */
export class InvalidAccessToken extends Error {
  constructor(readonly reason: 'malformed' | 'unknown_key' | 'expired' | 'claims' | 'invalid') {
    super(`access token refused: ${reason}`);
    this.name = 'InvalidAccessToken';
  }
}

/** Issues and verifies the service's own user access tokens (ES256 JWTs). */
@Injectable()
export class AccessTokens {
  /**
   * Tokens that passed verification, until their `exp`. The key is the whole
   * token, signature included, so only the exact bytes that were verified
   * match; the signing keys and the expected issuer and audience never change
   * while the process runs. Whether the session behind a token is still live is
   * not part of this: that is checked on every request (see SessionCache).
   * Each entry's TTL runs out at its token's `exp`, on the wall clock the
   * `exp` is stated in (see `untilExpiry`).
   */
  private readonly verified = new LRUCache<string, AccessTokenClaims>({ max: VERIFIED_TOKENS_KEPT, perf: Date, ttlResolution: 0 });

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly keys: SigningKeys,
  ) {}

  get issuer(): string {
    return this.config.publicBaseUrl;
  }

  async issue(userId: string, sessionId: string, expiresAt: Date): Promise<string> {
    const { kid, privateKey } = this.keys.signing;
    return new SignJWT({ sid: sessionId })
      .setProtectedHeader({ alg: TOKEN_ALGORITHM, kid, typ: 'JWT' })
      .setIssuer(this.issuer)
      .setAudience(ACCESS_TOKEN_AUDIENCE)
      .setSubject(userId)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(privateKey);
  }

  /**
   * Verifies signature (ES256 with the public key of the token's `kid`), issuer,
   * audience and expiry, and that `sub` and `sid` are present. Throws
   * `InvalidAccessToken`. The returned claims are shared: do not modify them.
   */
  async verify(token: string): Promise<AccessTokenClaims> {
    const known = this.recall(token);
    if (known) return known;
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      throw new InvalidAccessToken('malformed');
    }
    const key = this.keys.verificationKey(kid);
    if (!key) throw new InvalidAccessToken('unknown_key');
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, key, {
        algorithms: [TOKEN_ALGORITHM],
        issuer: this.issuer,
        audience: ACCESS_TOKEN_AUDIENCE,
      }));
    } catch (error) {
      throw new InvalidAccessToken(error instanceof errors.JWTExpired ? 'expired' : 'invalid');
    }
    if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string' || typeof payload.exp !== 'number')
      throw new InvalidAccessToken('claims');
    return this.remember(token, payload as unknown as AccessTokenClaims);
  }

  /** The claims of a token verified earlier in this process (here or by the HTTP guard's passport-jwt), until its `exp`. */
  recall(token: string): AccessTokenClaims | undefined {
    // An entry past its TTL is deleted by this get: a full verification then gives the precise refusal.
    return this.verified.get(token);
  }

  /** Remembers a token whose signature, issuer, audience and expiry were just verified; returns its frozen claims. */
  remember(token: string, payload: AccessTokenClaims): AccessTokenClaims {
    const claims: AccessTokenClaims = Object.freeze({ sub: payload.sub, sid: payload.sid, exp: payload.exp });
    rememberUntilExpiry(this.verified, token, claims, claims.exp);
    return claims;
  }
}

/**
 * Stores `value` in a cache whose clock is `Date` until `exp` (seconds since
 * the epoch, as JWTs state it): lru-cache calls an entry stale once its age
 * exceeds its TTL, and a token's last valid millisecond is one before `exp`.
 * A token with no millisecond left is not stored (a TTL of 0 would mean "forever").
 */
export function rememberUntilExpiry<V extends object>(cache: LRUCache<string, V>, token: string, value: V, exp: number): void {
  const now = Date.now();
  const ttl = exp * 1000 - now - 1;
  if (ttl >= 1) cache.set(token, value, { ttl, start: now });
}
