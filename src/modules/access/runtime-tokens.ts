import { KeyObject, randomUUID, sign } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { KeyLike } from 'jose';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { SigningKeys, TOKEN_ALGORITHM } from './signing-keys.service';

/**
 * The `typ` header of runtime tokens (RFC 8725 §3.11 explicit typing): a runtime
 * checks it, so no other token of the service (user, console or platform tokens,
 * all `JWT`) can be passed off as one.
 */
export const RUNTIME_TOKEN_TYPE = 'runtime+jwt';
/** Lifetime of a runtime token: minted for one request (its retries included), so minutes are plenty. */
export const RUNTIME_TOKEN_TTL_SECONDS = 300;
/** Request header naming the mode of the call: `true` for live installs, `false` for test traffic (conformance). */
export const LIVEMODE_HEADER = 'X-Service-Livemode';
export const REQUEST_ID_HEADER = 'X-Service-Request-Id';

/** One call to a provider runtime, as its token states it (docs/runtime-auth.md). */
export interface RuntimeCall {
  /** The app whose runtime is called: the token's audience (`aud`), the app id (`app_…`). */
  appId: string;
  /** The user the call acts for (`sub`, also `uid`). */
  userId: string;
  /** The install the call is made for (`iid`); `inst_test…` for test traffic. */
  installId: string;
  /** The request id the token is minted for (`rid`), equal to the `X-Service-Request-Id` header of the call. */
  requestId: string;
  /** The scopes the install granted (`scope`, space-separated; empty for test traffic). */
  scopes: readonly string[];
  /** False for test traffic (conformance runs); live installs always true. */
  livemode: boolean;
}

/** The claims of a runtime token, as a runtime reads them after verification. */
export interface RuntimeTokenClaims {
  iss: string;
  aud: string;
  sub: string;
  uid: string;
  iid: string;
  rid: string;
  jti: string;
  scope: string;
  livemode: boolean;
  iat: number;
  exp: number;
}

/**
 * Mints the one kind of token the service sends to provider runtimes, on every
 * call (state, action, history, realtime streams, retries, polls, conformance):
 * an ES256 JWT signed with the service key, verifiable offline against
 * `/.well-known/jwks.json`, typed `runtime+jwt`, for one app (`aud`), one
 * install and user, one request (`rid`), unique (`jti`) and short-lived. It is
 * not a platform credential: the platform accepts only its own audiences, so a
 * runtime (or a thief of its logs) cannot call the service with it.
 * Never persisted or logged. docs/runtime-auth.md documents it for providers.
 */
@Injectable()
export class RuntimeTokens {
  /** The encoded protected header of the signing key's tokens (it changes only with the key). */
  private header?: { kid: string; encoded: string };

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly keys: SigningKeys,
  ) {}

  /** `iss` of every runtime token: the service's public base URL. */
  get issuer(): string {
    return this.config.publicBaseUrl;
  }

  /** Where runtimes fetch the keys that verify these tokens. */
  get jwksUrl(): string {
    return `${this.issuer.replace(/\/+$/, '')}/.well-known/jwks.json`;
  }

  /**
   * A token for one call. `issuedAt` backdates it (conformance mints an
   * already expired token with it, to check that the runtime refuses one).
   */
  async mint(call: RuntimeCall, options: { issuedAt?: Date } = {}): Promise<string> {
    const iat = Math.floor((options.issuedAt ?? new Date()).getTime() / 1000);
    const { kid, privateKey } = this.keys.signing;
    const claims: RuntimeTokenClaims = {
      iss: this.issuer,
      aud: call.appId,
      sub: call.userId,
      uid: call.userId,
      iid: call.installId,
      rid: call.requestId,
      jti: randomUUID(),
      scope: call.scopes.join(' '),
      livemode: call.livemode,
      iat,
      exp: iat + RUNTIME_TOKEN_TTL_SECONDS,
    };
    return this.signed(kid, privateKey, claims);
  }

  /**
   * The JWS compact serialisation (RFC 7515 §7.1) of ES256-signed claims,
   * signed by `node:crypto` in this call: one is minted per runtime call, and
   * jose's general-purpose `SignJWT` cost about four times as much CPU for
   * the same token (docs/decisions.md, "Runtime tokens: signed by jose or by `node:crypto`?").
   * The signature is ECDSA P-256 over SHA-256 in the JWS form (r ‖ s,
   * `ieee-p1363`), which jose and every JWT library verify.
   */
  private signed(kid: string, privateKey: KeyLike, claims: RuntimeTokenClaims): string {
    if (this.header?.kid !== kid) {
      const json = JSON.stringify({ alg: TOKEN_ALGORITHM, kid, typ: RUNTIME_TOKEN_TYPE });
      this.header = { kid, encoded: Buffer.from(json).toString('base64url') };
    }
    const input = `${this.header.encoded}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    const key = privateKey instanceof KeyObject ? privateKey : KeyObject.from(privateKey as Parameters<typeof KeyObject.from>[0]);
    return `${input}.${sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  }

  /** The headers every runtime call carries: its token, its request id and its mode. */
  async headers(call: RuntimeCall): Promise<Record<string, string>> {
    return runtimeCallHeaders(await this.mint(call), call.requestId, call.livemode);
  }
}

/** `Authorization`, `X-Service-Request-Id` and `X-Service-Livemode` of a runtime call. */
export function runtimeCallHeaders(token: string, requestId: string, livemode: boolean): Record<string, string> {
  return { Authorization: `Bearer ${token}`, [REQUEST_ID_HEADER]: requestId, [LIVEMODE_HEADER]: String(livemode) };
}
