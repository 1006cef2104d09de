import { Inject, Injectable } from '@nestjs/common';
import { decodeProtectedHeader, errors, jwtVerify, SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import { ProblemError } from '../../../common/errors/problem-error';
import { APP_CONFIG } from '../../../config/config.module';
import type { AppConfig } from '../../../config/app-config';
import { rememberUntilExpiry } from '../../access/access-tokens';
import { SigningKeys, TOKEN_ALGORITHM } from '../../access/signing-keys.service';

/** Audience of developer console tokens (login with email and password). */
export const CONSOLE_AUDIENCE = 'provider-console';
/** Audience of app tokens (client credentials and delegated install tokens). */
export const PLATFORM_AUDIENCE = 'provider-platform';

export type PlatformClaims =
  | { kind: 'developer'; developerId: string; sessionId: string; exp: number }
  | {
      kind: 'app';
      developerId: string;
      appId: string;
      scopes: string[];
      /** Set on tokens a user's install delegated: they act for that user and install only. */
      userId?: string;
      installId?: string;
      /** Generation of the client secret that obtained the token; absent on tokens the service minted itself. */
      secretGeneration?: number;
      exp: number;
    };

/** How an app token came to be: through a client secret of some generation, for a user's install, or both. */
export interface AppTokenOrigin {
  delegation?: { userId: string; installId: string };
  secretGeneration?: number;
}

/** JWTs of the provider platform, signed with the service key (verifiable at /.well-known/jwks.json). */
@Injectable()
export class PlatformTokens {
  /**
   * Tokens that passed verification, until their `exp` (keyed by the whole
   * token, signature included; keys, issuer and audiences are fixed for the
   * life of the process). Sessions, apps and suspensions are still checked on
   * every call by the guard. Each entry's TTL runs out at the token's `exp`.
   */
  private readonly verified = new LRUCache<string, PlatformClaims>({ max: 10_000, perf: Date, ttlResolution: 0 });

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly keys: SigningKeys,
  ) {}

  get ttlSeconds(): number {
    return this.config.platformTokenTtlSeconds;
  }

  async forDeveloper(developerId: string, sessionId: string, expiresAt: Date): Promise<string> {
    return this.sign({ sid: sessionId }, developerId, CONSOLE_AUDIENCE, expiresAt);
  }

  async forApp(app: { id: string; developerId: string }, scopes: string[], expiresAt: Date, origin: AppTokenOrigin = {}): Promise<string> {
    const claims: Record<string, unknown> = { dev: app.developerId, scope: scopes.join(' ') };
    if (origin.delegation) Object.assign(claims, { uid: origin.delegation.userId, iid: origin.delegation.installId });
    if (origin.secretGeneration !== undefined) claims.sgen = origin.secretGeneration;
    return this.sign(claims, app.id, PLATFORM_AUDIENCE, expiresAt);
  }

  /** Verifies a platform bearer token; expired → `token_expired`, anything else wrong → `invalid_token`. */
  async verify(token: string): Promise<PlatformClaims> {
    // An entry past its TTL is deleted by this get and verified afresh, for the precise refusal.
    const known = this.verified.get(token);
    if (known) return known;
    const claims = await this.verifyAfresh(token);
    if (claims.kind === 'app') Object.freeze(claims.scopes);
    rememberUntilExpiry(this.verified, token, Object.freeze(claims), claims.exp);
    return claims;
  }

  private async verifyAfresh(token: string): Promise<PlatformClaims> {
    const invalid = new ProblemError(
      'invalid_token',
      'The bearer token is not valid',
      {},
      { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
    );
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      throw invalid;
    }
    const key = this.keys.verificationKey(kid);
    if (!key) throw invalid;
    try {
      const { payload } = await jwtVerify(token, key, {
        algorithms: [TOKEN_ALGORITHM],
        issuer: this.config.publicBaseUrl,
        audience: [CONSOLE_AUDIENCE, PLATFORM_AUDIENCE],
      });
      const audience = Array.isArray(payload.aud) ? payload.aud[0] : payload.aud;
      if (typeof payload.sub !== 'string' || typeof payload.exp !== 'number') throw invalid;
      if (audience === CONSOLE_AUDIENCE && typeof payload.sid === 'string') {
        return { kind: 'developer', developerId: payload.sub, sessionId: payload.sid, exp: payload.exp };
      }
      if (audience === PLATFORM_AUDIENCE && typeof payload.dev === 'string' && typeof payload.scope === 'string') {
        return {
          kind: 'app',
          appId: payload.sub,
          developerId: payload.dev,
          scopes: payload.scope.split(' ').filter(Boolean),
          userId: typeof payload.uid === 'string' ? payload.uid : undefined,
          installId: typeof payload.iid === 'string' ? payload.iid : undefined,
          secretGeneration: Number.isInteger(payload.sgen) ? (payload.sgen as number) : undefined,
          exp: payload.exp,
        };
      }
      throw invalid;
    } catch (error) {
      if (error instanceof errors.JWTExpired) {
        throw new ProblemError(
          'token_expired',
          'The access token has expired; obtain a new one',
          {},
          { 'WWW-Authenticate': 'Bearer error="invalid_token", error_description="token expired"' },
        );
      }
      throw invalid;
    }
  }

  private sign(claims: Record<string, unknown>, subject: string, audience: string, expiresAt: Date): Promise<string> {
    const { kid, privateKey } = this.keys.signing;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: TOKEN_ALGORITHM, kid, typ: 'JWT' })
      .setIssuer(this.config.publicBaseUrl)
      .setAudience(audience)
      .setSubject(subject)
      .setIssuedAt()
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(privateKey);
  }
}
