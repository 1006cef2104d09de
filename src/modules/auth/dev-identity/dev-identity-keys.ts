import { createHash, generateKeyPairSync, KeyObject, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { JWK, SignJWT } from 'jose';
import { APP_CONFIG } from '../../../config/config.module';
import type { AppConfig } from '../../../config/app-config';

export interface DevAccount {
  subject: string;
  name: string;
  email: string;
}

/** The subject of a development account: derived from the email, so creating the same person twice signs in the same user. */
export function devSubject(email: string): string {
  const normalised = email.trim().toLowerCase();
  return normalised.length <= 120 ? `dev-${normalised}` : `dev-${createHash('sha256').update(normalised).digest('hex').slice(0, 40)}`;
}

/**
 * The signing key of the development identity provider: an RS256 key made at
 * start-up and kept in memory (a restart only invalidates ID tokens not yet
 * exchanged, which live seconds). Present only when `DEV_IDP` is on.
 */
@Injectable()
export class DevIdentityKeys {
  private readonly key: { kid: string; privateKey: KeyObject; publicJwk: JWK } | null = null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    if (!config.devIdp) return;
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const kid = `dev-${randomUUID()}`;
    this.key = { kid, privateKey, publicJwk: { ...(publicKey.export({ format: 'jwk' }) as JWK), kid, alg: 'RS256', use: 'sig' } };
  }

  get enabled(): boolean {
    return this.key !== null;
  }

  jwks(): { keys: JWK[] } {
    return { keys: this.key ? [this.key.publicJwk] : [] };
  }

  /** A Firebase-shaped ID token for the account, with its email marked verified (as the Firebase Auth emulator does). */
  async idToken(account: DevAccount): Promise<string> {
    if (!this.key) throw new Error('the development identity provider is off');
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      name: account.name,
      email: account.email,
      email_verified: true,
      auth_time: now,
      firebase: { sign_in_provider: 'password' },
    })
      .setProtectedHeader({ alg: 'RS256', kid: this.key.kid, typ: 'JWT' })
      .setIssuer(this.config.idp.issuer)
      .setAudience(this.config.idp.audience)
      .setSubject(account.subject)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(this.key.privateKey);
  }
}
