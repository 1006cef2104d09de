import { ProblemError } from '../../../common/errors/problem-error';
import type { PlatformPrincipal, PlatformRouteOptions } from './platform-principal';
import type { PlatformClaims } from './platform-tokens';

/** What a platform token stands on, read afresh on every call (see PlatformAuthGuard). */
export interface PlatformStanding {
  status: string;
  email_verified_at: Date | null;
  /** Apps only. */
  app_scopes?: string[];
}

/**
 * The rules of a provider platform route for a verified token, in the order a
 * caller can fix them: the token still standing on something, suspended
 * account, unverified email, token kind, delegation, missing scope. Returns the
 * principal the route acts for; throws the ProblemError the caller sees.
 */
export function platformAccess(
  claims: PlatformClaims,
  standing: PlatformStanding | undefined,
  options: PlatformRouteOptions,
): PlatformPrincipal {
  if (!standing)
    throw new ProblemError(
      'invalid_token',
      'The session, app or install behind this token no longer exists or was revoked',
      {},
      { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
    );
  if (standing.status === 'suspended')
    throw new ProblemError('account_suspended', 'This developer account is suspended; contact support to request reinstatement');
  if (options.verifiedEmail !== false && !standing.email_verified_at) {
    throw new ProblemError(
      'email_not_verified',
      'Verify the account email address first (see the link we sent, or POST /v1/providers/account/verify/resend)',
    );
  }
  const principals = options.principals ?? ['developer', 'app'];
  if (!principals.includes(claims.kind)) {
    throw new ProblemError(
      'insufficient_scope',
      claims.kind === 'app' ? 'This operation requires a developer console token' : 'This operation requires an app access token',
    );
  }
  if (claims.kind === 'developer') {
    return { kind: 'developer', developerId: claims.developerId, sessionId: claims.sessionId };
  }
  const delegation = claims.installId && claims.userId ? { userId: claims.userId, installId: claims.installId } : undefined;
  if (delegation && !options.delegated) {
    throw new ProblemError(
      'insufficient_scope',
      "This token acts for one user's install and can only execute its capabilities; use an app token from the client_credentials grant",
    );
  }
  // The token's scopes as issued, narrowed to what the app holds now: a scope removed from the app ends at once.
  const scopes = claims.scopes.filter((scope) => standing.app_scopes!.includes(scope));
  if (options.scope && !scopes.includes(options.scope)) {
    throw new ProblemError(
      'insufficient_scope',
      claims.scopes.includes(options.scope)
        ? `The app no longer holds the ${options.scope} scope`
        : `This operation requires the ${options.scope} scope`,
      { required_scope: options.scope },
    );
  }
  return { kind: 'app', developerId: claims.developerId, appId: claims.appId, scopes, delegation };
}
