import { readFileSync } from 'node:fs';
import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, errors, JSONWebKeySet, JWTPayload, jwtVerify, JWTVerifyGetKey } from 'jose';
import { RuntimeError } from './errors';

/** The `typ` of runtime tokens: no other token of the service (all `JWT`) passes for one. */
export const RUNTIME_TOKEN_TYPE = 'runtime+jwt';
/** docs/runtime-auth.md, step 6: "allow at most about 30 s of clock skew". */
export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 30;

/**
 * The issuer of the tokens `soul conformance --url` and `soul invoke --local` mint with the CLI's own local
 * key (docs/toolkit.md, "Local runs"). A runtime trusts them only when it was given that key (`localKeys`, or
 * the file named by `SOUL_LOCAL_JWKS`), never in production, and only for test traffic (`livemode: false`).
 */
export const LOCAL_TOKEN_ISSUER = 'urn:soul-service:cli-local';
/** The environment variable naming the JWKS file of the CLI's local key (`soul conformance --print-jwks-path`). */
export const LOCAL_JWKS_ENV = 'SOUL_LOCAL_JWKS';

/** The claims of a verified runtime token (docs/runtime-auth.md, "The token"). */
export interface RuntimeTokenClaims extends JWTPayload {
  iss: string;
  aud: string;
  sub: string;
  uid?: string;
  iid: string;
  rid: string;
  jti: string;
  scope?: string;
  livemode: boolean;
  iat: number;
  exp: number;
}

/** Who and what a verified call is for: what a handler may rely on. */
export interface VerifiedCall {
  userId: string;
  installId: string;
  scopes: string[];
  requestId: string;
  /** False for test traffic (conformance): answer from fixtures and never act (docs/runtime-auth.md, "Test mode"). */
  livemode: boolean;
  tokenId: string;
  claims: RuntimeTokenClaims;
}

export interface VerifierOptions {
  /** The service's public base URL (`PUBLIC_BASE_URL`): the exact `iss`, and where `/.well-known/jwks.json` is fetched. */
  serviceUrl: string;
  /** This runtime's app id (`app_…`): the exact `aud`. */
  appId: string;
  /**
   * The key set, when not the service's published one: a JWKS object (tests,
   * air-gapped runtimes) or a key resolver. Default: `<serviceUrl>/.well-known/jwks.json`,
   * cached and refetched for an unknown `kid` (jose's `createRemoteJWKSet`).
   */
  keys?: JSONWebKeySet | JWTVerifyGetKey;
  /** Where to fetch the key set when it is not `<serviceUrl>/.well-known/jwks.json` (a service reached by an internal address). */
  jwksUrl?: string;
  clockToleranceSeconds?: number;
  /**
   * The public key set of the CLI's local key, to answer `soul conformance --url` and `soul invoke --local`
   * on this machine. Default: the file `SOUL_LOCAL_JWKS` names, unless `NODE_ENV` is `production` (then
   * never, even when given). Tokens of that key pass only as test traffic (`livemode: false`).
   */
  localKeys?: JSONWebKeySet;
}

/** The local key set from `options` or `SOUL_LOCAL_JWKS`; none in production. */
function localKeySet(given: JSONWebKeySet | undefined, env: NodeJS.ProcessEnv = process.env): JWTVerifyGetKey | null {
  if (env.NODE_ENV === 'production') return null;
  if (given) return createLocalJWKSet(given);
  const path = env[LOCAL_JWKS_ENV];
  if (!path) return null;
  let keys: JSONWebKeySet;
  try {
    keys = JSON.parse(readFileSync(path, 'utf8')) as JSONWebKeySet;
  } catch (error) {
    throw new TypeError(`${LOCAL_JWKS_ENV}=${path}: cannot read the CLI's local key set (${(error as Error).message})`);
  }
  return createLocalJWKSet(keys);
}

/** Headers as Node gives them (lower-case names). */
export type IncomingHeaders = Record<string, string | string[] | undefined>;

const header = (headers: IncomingHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
};

const invalid = (message: string) => new RuntimeError('AUTH_INVALID', message);

/**
 * Verifies the runtime token of every call exactly as docs/runtime-auth.md
 * lists it, and answers the documented refusals: `AUTH_EXPIRED` only for a
 * token that is valid but expired (the service then mints a fresh one and
 * retries once); `AUTH_INVALID` for everything else (never retried).
 */
export class RuntimeTokenVerifier {
  private readonly keys: JWTVerifyGetKey;
  private readonly issuer: string;
  private readonly localKeys: JWTVerifyGetKey | null;

  constructor(private readonly options: VerifierOptions) {
    if (!/^app_\w+$/.test(options.appId)) throw new TypeError(`appId must be your app's id (app_…), got ${JSON.stringify(options.appId)}`);
    // `iss` is the base URL exactly as configured by the service; a trailing slash here would refuse every token.
    this.issuer = options.serviceUrl.replace(/\/+$/, '');
    const keys = options.keys;
    this.keys =
      typeof keys === 'function'
        ? keys
        : keys
          ? createLocalJWKSet(keys)
          : createRemoteJWKSet(new URL(options.jwksUrl ?? `${this.issuer}/.well-known/jwks.json`), {
              cooldownDuration: 30_000,
              cacheMaxAge: 10 * 60_000,
            });
    this.localKeys = localKeySet(options.localKeys);
  }

  /** Whether this runtime accepts tokens of the CLI's local key (development, with the key given). */
  get trustsLocalKey(): boolean {
    return this.localKeys !== null;
  }

  async verify(headers: IncomingHeaders): Promise<VerifiedCall> {
    const token = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(header(headers, 'authorization') ?? '')?.[1];
    if (!token) throw invalid('a bearer runtime token is required');
    // The unverified `iss` only picks the key set; the signature and every claim are then checked against it.
    const local = this.localKeys !== null && unverifiedIssuer(token) === LOCAL_TOKEN_ISSUER;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, local ? this.localKeys : this.keys, {
        algorithms: ['ES256'],
        typ: RUNTIME_TOKEN_TYPE,
        issuer: local ? LOCAL_TOKEN_ISSUER : this.issuer,
        audience: this.options.appId,
        requiredClaims: ['sub', 'iid', 'rid', 'jti', 'iat', 'exp'],
        clockTolerance: this.options.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS,
      }));
    } catch (error) {
      // jose checks the signature before the claims, so only a genuine token can be reported as expired.
      if (error instanceof errors.JWTExpired) throw new RuntimeError('AUTH_EXPIRED', 'the runtime token has expired');
      throw invalid(`the runtime token is not valid (${reason(error)})`);
    }
    const claims = payload as RuntimeTokenClaims;
    if (local && claims.livemode !== false)
      throw invalid('a token of the CLI local key is accepted for test traffic only (livemode false)');
    if (typeof claims.sub !== 'string' || typeof claims.iid !== 'string' || typeof claims.rid !== 'string') {
      throw invalid('the runtime token lacks sub, iid or rid');
    }
    if (claims.rid !== header(headers, 'x-service-request-id')) throw invalid('rid does not match X-Service-Request-Id');
    if (typeof claims.livemode !== 'boolean' || String(claims.livemode) !== header(headers, 'x-service-livemode')) {
      throw invalid('livemode does not match X-Service-Livemode');
    }
    // Conformance (and the spec) send the user again for state calls; when present it must be the token's.
    const userHeader = header(headers, 'x-service-user-id');
    if (userHeader !== undefined && userHeader !== claims.sub) throw invalid('X-Service-User-Id does not match the token');
    return {
      userId: claims.sub,
      installId: claims.iid,
      scopes: typeof claims.scope === 'string' && claims.scope !== '' ? claims.scope.split(' ') : [],
      requestId: claims.rid,
      livemode: claims.livemode,
      tokenId: claims.jti,
      claims,
    };
  }
}

function unverifiedIssuer(token: string): unknown {
  try {
    return decodeJwt(token).iss;
  } catch {
    return undefined;
  }
}

/** A short reason for the refusal that names the check (issuer, audience, signature …) without echoing the token. */
function reason(error: unknown): string {
  if (error instanceof errors.JWTClaimValidationFailed) return `${error.claim}: ${error.reason}`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'signature';
  if (error instanceof errors.JWKSNoMatchingKey) return 'no key of the service has this kid';
  if (error instanceof errors.JOSEError) return error.code;
  return 'unreadable';
}
