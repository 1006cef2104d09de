import { Inject, Injectable } from '@nestjs/common';
import { decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { SigningKeys, TOKEN_ALGORITHM } from './signing-keys.service';

export const ACCESS_TOKEN_AUDIENCE = 'user-api';
export const ACCESS_TOKEN_TTL_SECONDS = 3600;

export interface AccessTokenClaims {
  /** User id. */
  sub: string;
  /** Session id. */
  sid: string;
  exp: number;
}

/** Issues and verifies the service's own user access tokens (ES256 JWTs). */
@Injectable()
export class AccessTokens {
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

  /** Verifies signature, issuer, audience and expiry. Used where passport does not run (the WebSocket gateway). */
  async verify(token: string): Promise<AccessTokenClaims> {
    const { kid } = decodeProtectedHeader(token);
    const key = this.keys.verificationKey(kid);
    if (!key) throw new Error('unknown signing key');
    const { payload } = await jwtVerify(token, key, {
      algorithms: [TOKEN_ALGORITHM],
      issuer: this.issuer,
      audience: ACCESS_TOKEN_AUDIENCE,
    });
    if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string' || typeof payload.exp !== 'number')
      throw new Error('incomplete claims');
    return { sub: payload.sub, sid: payload.sid, exp: payload.exp };
  }
}
