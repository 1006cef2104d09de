import { Inject, Injectable } from '@nestjs/common';
import { createLocalJWKSet, createRemoteJWKSet, errors, JWTPayload, jwtVerify } from 'jose';
import { ApiError } from '../../common/errors/api-error';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { DevIdentityKeys } from './dev-identity/dev-identity-keys';

export interface VerifiedIdentity {
  subject: string;
  name: string | null;
  email: string | null;
  /** The provider vouches that the subject controls `email` (`email_verified: true`, the boolean itself, nothing truthy). */
  emailVerified: boolean;
}

const CLOCK_TOLERANCE_SECONDS = 5;

/**
 * Verifies ID tokens of the identity provider (Firebase by default): RS256
 * signature against the provider's JWKS (cached; fetched again when a token
 * names an unknown `kid`), issuer, audience, expiry, and that `iat` and
 * `auth_time` are not in the future, with a non-empty `sub`. With `DEV_IDP` the
 * keys are the in-process development provider's (the set it serves at
 * /dev-idp/jwks.json), so the service never calls itself.
 */
@Injectable()
export class IdentityTokenVerifier {
  private readonly jwks: ReturnType<typeof createRemoteJWKSet> | ReturnType<typeof createLocalJWKSet>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    devKeys: DevIdentityKeys,
  ) {
    this.jwks = devKeys.enabled
      ? createLocalJWKSet(devKeys.jwks())
      : createRemoteJWKSet(new URL(config.idp.jwksUrl), {
          cacheMaxAge: 10 * 60_000,
          cooldownDuration: config.idp.jwksCooldownMs,
          timeoutDuration: 5_000,
        });
  }

  async verify(token: string): Promise<VerifiedIdentity> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.jwks, {
        algorithms: ['RS256'],
        issuer: this.config.idp.issuer,
        audience: this.config.idp.audience,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['iat', 'exp', 'sub', 'auth_time'],
      }));
    } catch (error) {
      // The provider's key set being unreachable is our outage, not the caller's bad token.
      if (error instanceof errors.JWKSTimeout || !(error instanceof errors.JOSEError)) {
        throw new ApiError('SERVICE_UNAVAILABLE', 'The identity provider keys are unavailable; try again shortly', { 'Retry-After': '5' });
      }
      throw new ApiError('UNAUTHORIZED', `firebase_token was rejected: ${describe(error)}`);
    }
    const now = Math.floor(Date.now() / 1000) + CLOCK_TOLERANCE_SECONDS;
    if (typeof payload.iat !== 'number' || payload.iat > now)
      throw new ApiError('UNAUTHORIZED', 'firebase_token was rejected: issued in the future');
    if (typeof payload.auth_time !== 'number' || payload.auth_time > now) {
      throw new ApiError('UNAUTHORIZED', 'firebase_token was rejected: auth_time is missing or in the future');
    }
    if (typeof payload.sub !== 'string' || payload.sub.length === 0 || payload.sub.length > 128) {
      throw new ApiError('UNAUTHORIZED', 'firebase_token was rejected: sub must be a non-empty string');
    }
    return {
      subject: payload.sub,
      name: typeof payload.name === 'string' ? payload.name : null,
      email: typeof payload.email === 'string' ? payload.email : null,
      emailVerified: typeof payload.email === 'string' && payload.email_verified === true,
    };
  }
}

/** Says what was wrong without echoing the token. */
function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'token expired';
  if (error instanceof errors.JWTClaimValidationFailed) return `claim ${error.claim} is invalid`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'signature does not verify';
  if (error instanceof errors.JWKSNoMatchingKey) return 'signing key is unknown';
  if (error instanceof errors.JOSEAlgNotAllowed) return 'algorithm not allowed';
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return 'malformed token';
  return 'invalid token';
}
