import { ProblemError } from '../../src/common/errors/problem-error';
import { platformAccess, PlatformStanding } from '../../src/modules/providers/auth/platform-access';
import type { PlatformRouteOptions } from '../../src/modules/providers/auth/platform-principal';
import type { PlatformClaims } from '../../src/modules/providers/auth/platform-tokens';

const EXP = 2_000_000_000;
const developer: PlatformClaims = { kind: 'developer', developerId: 'dev_1', sessionId: 'ses_1', exp: EXP };
const app = (extra: Partial<Extract<PlatformClaims, { kind: 'app' }>> = {}): PlatformClaims => ({
  kind: 'app',
  developerId: 'dev_1',
  appId: 'app_1',
  scopes: ['packages:read', 'packages:write'],
  exp: EXP,
  ...extra,
});
const delegated = (extra: Partial<Extract<PlatformClaims, { kind: 'app' }>> = {}) =>
  app({ scopes: ['capabilities:execute'], userId: 'usr_1', installId: 'inst_1', ...extra });

const verified: PlatformStanding = { status: 'active', email_verified_at: new Date('2026-01-01T00:00:00Z') };
const unverified: PlatformStanding = { status: 'active', email_verified_at: null };
const appStanding = (app_scopes: string[], base: PlatformStanding = verified): PlatformStanding => ({ ...base, app_scopes });
const ALL_APP_SCOPES = appStanding(['packages:read', 'packages:write', 'capabilities:execute']);

/** The ProblemError the rules throw, with every field the caller sees. */
function refusal(claims: PlatformClaims, standing: PlatformStanding | undefined, options: PlatformRouteOptions = {}) {
  try {
    platformAccess(claims, standing, options);
  } catch (error) {
    expect(error).toBeInstanceOf(ProblemError);
    const { code, status, detail, extras, headers } = error as ProblemError;
    return { code, status, detail, extras, headers };
  }
  throw new Error('expected a refusal');
}

const NEEDS_CONSOLE = 'This operation requires a developer console token';
const NEEDS_APP = 'This operation requires an app access token';
const DELEGATED_ONLY =
  "This token acts for one user's install and can only execute its capabilities; use an app token from the client_credentials grant";

describe('platform access rules (token kind, delegation, scope narrowing)', () => {
  describe('the token must still stand on something', () => {
    it.each([
      ['a developer token', developer],
      ['an app token', app()],
    ])('refuses %s with no standing row with invalid_token and a Bearer challenge', (_name, claims) => {
      expect(refusal(claims, undefined)).toEqual({
        code: 'invalid_token',
        status: 401,
        detail: 'The session, app or install behind this token no longer exists or was revoked',
        extras: {},
        headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
      });
    });
  });

  describe('account standing', () => {
    it('refuses a suspended developer with account_suspended, before the email check', () => {
      expect(refusal(developer, { status: 'suspended', email_verified_at: null })).toEqual({
        code: 'account_suspended',
        status: 403,
        detail: 'This developer account is suspended; contact support to request reinstatement',
        extras: {},
        headers: {},
      });
    });

    it('refuses a suspended developer even on a route that does not need a verified email', () => {
      expect(refusal(developer, { ...verified, status: 'suspended' }, { verifiedEmail: false }).code).toBe('account_suspended');
    });

    it('refuses the app token of a suspended developer with account_suspended', () => {
      expect(refusal(app(), appStanding(['packages:read'], { ...verified, status: 'suspended' })).code).toBe('account_suspended');
    });

    it('accepts any status other than suspended', () => {
      expect(platformAccess(developer, { ...verified, status: 'pending_review' }, {})).toEqual({
        kind: 'developer',
        developerId: 'dev_1',
        sessionId: 'ses_1',
      });
    });
  });

  describe('verified email', () => {
    it('refuses an unverified developer with email_not_verified by default', () => {
      expect(refusal(developer, unverified)).toEqual({
        code: 'email_not_verified',
        status: 403,
        detail: 'Verify the account email address first (see the link we sent, or POST /v1/providers/account/verify/resend)',
        extras: {},
        headers: {},
      });
    });

    it('refuses an unverified developer when the route asks for verification explicitly', () => {
      expect(refusal(developer, unverified, { verifiedEmail: true }).code).toBe('email_not_verified');
    });

    it('lets an unverified developer call a route marked verifiedEmail: false', () => {
      expect(platformAccess(developer, unverified, { verifiedEmail: false })).toEqual({
        kind: 'developer',
        developerId: 'dev_1',
        sessionId: 'ses_1',
      });
    });

    it('refuses the app token of an unverified developer with email_not_verified', () => {
      expect(refusal(app(), appStanding(['packages:read'], unverified)).code).toBe('email_not_verified');
    });

    it('checks the email before the token kind', () => {
      expect(refusal(app(), appStanding(['packages:read'], unverified), { principals: ['developer'] }).code).toBe('email_not_verified');
    });
  });

  describe('token kind', () => {
    it('lets both kinds call a route that names none', () => {
      expect(platformAccess(developer, verified, {}).kind).toBe('developer');
      expect(platformAccess(app(), ALL_APP_SCOPES, {}).kind).toBe('app');
    });

    it('refuses an app token on a console-only route with insufficient_scope naming the console token', () => {
      expect(refusal(app(), ALL_APP_SCOPES, { principals: ['developer'] })).toEqual({
        code: 'insufficient_scope',
        status: 403,
        detail: NEEDS_CONSOLE,
        extras: {},
        headers: {},
      });
    });

    it('refuses a console token on an app-only route with insufficient_scope naming the app token', () => {
      expect(refusal(developer, verified, { principals: ['app'] })).toEqual({
        code: 'insufficient_scope',
        status: 403,
        detail: NEEDS_APP,
        extras: {},
        headers: {},
      });
    });

    it('refuses every token on a route that allows no kind', () => {
      expect(refusal(developer, verified, { principals: [] }).detail).toBe(NEEDS_APP);
      expect(refusal(app(), ALL_APP_SCOPES, { principals: [] }).detail).toBe(NEEDS_CONSOLE);
    });

    it('checks the token kind before the scope', () => {
      expect(refusal(app({ scopes: [] }), ALL_APP_SCOPES, { principals: ['developer'], scope: 'packages:read' }).detail).toBe(
        NEEDS_CONSOLE,
      );
    });
  });

  describe('developer console tokens', () => {
    it('act for their owner with every scope: a scoped route accepts them', () => {
      expect(platformAccess(developer, verified, { scope: 'packages:write' })).toStrictEqual({
        kind: 'developer',
        developerId: 'dev_1',
        sessionId: 'ses_1',
      });
    });
  });

  describe('delegated install tokens', () => {
    it('are refused on a route that does not accept delegation, with insufficient_scope', () => {
      expect(refusal(delegated(), ALL_APP_SCOPES)).toEqual({
        code: 'insufficient_scope',
        status: 403,
        detail: DELEGATED_ONLY,
        extras: {},
        headers: {},
      });
    });

    it('are refused on a route marked delegated: false', () => {
      expect(refusal(delegated(), ALL_APP_SCOPES, { delegated: false }).detail).toBe(DELEGATED_ONLY);
    });

    it('are refused for delegation before their scope is checked', () => {
      expect(refusal(delegated({ scopes: [] }), ALL_APP_SCOPES, { scope: 'capabilities:execute' }).detail).toBe(DELEGATED_ONLY);
    });

    it('act for their user and install on a route that accepts delegation', () => {
      expect(platformAccess(delegated(), ALL_APP_SCOPES, { delegated: true, scope: 'capabilities:execute' })).toStrictEqual({
        kind: 'app',
        developerId: 'dev_1',
        appId: 'app_1',
        scopes: ['capabilities:execute'],
        delegation: { userId: 'usr_1', installId: 'inst_1' },
      });
    });

    it.each([
      ['a user without an install', { userId: 'usr_1', installId: undefined }],
      ['an install without a user', { userId: undefined, installId: 'inst_1' }],
      ['empty ids', { userId: '', installId: '' }],
    ])('are not delegated when the token carries %s', (_name, ids) => {
      const principal = platformAccess(app({ scopes: ['packages:read'], ...ids }), ALL_APP_SCOPES, { scope: 'packages:read' });
      expect(principal).toStrictEqual({
        kind: 'app',
        developerId: 'dev_1',
        appId: 'app_1',
        scopes: ['packages:read'],
        delegation: undefined,
      });
    });
  });

  describe('scopes: the token’s, narrowed to what the app holds now', () => {
    it('gives an app token the scopes it carries that the app still holds, in the token’s order', () => {
      const claims = app({ scopes: ['packages:write', 'apps:read', 'packages:read'] });
      expect(platformAccess(claims, appStanding(['packages:read', 'packages:write']), {})).toStrictEqual({
        kind: 'app',
        developerId: 'dev_1',
        appId: 'app_1',
        scopes: ['packages:write', 'packages:read'],
        delegation: undefined,
      });
    });

    it('never adds a scope the app holds but the token does not carry', () => {
      const principal = platformAccess(app({ scopes: ['packages:read'] }), appStanding(['packages:read', 'apps:write']), {});
      expect(principal).toMatchObject({ scopes: ['packages:read'] });
    });

    it('accepts a route whose scope the token carries and the app holds', () => {
      expect(platformAccess(app(), ALL_APP_SCOPES, { scope: 'packages:write' })).toMatchObject({
        kind: 'app',
        scopes: ['packages:read', 'packages:write'],
      });
    });

    it('refuses a scope the token never carried with insufficient_scope and required_scope', () => {
      expect(refusal(app({ scopes: ['packages:read'] }), ALL_APP_SCOPES, { scope: 'packages:write' })).toEqual({
        code: 'insufficient_scope',
        status: 403,
        detail: 'This operation requires the packages:write scope',
        extras: { required_scope: 'packages:write' },
        headers: {},
      });
    });

    it('refuses a scope removed from the app since the token was issued, saying the app no longer holds it', () => {
      expect(refusal(app(), appStanding(['packages:read']), { scope: 'packages:write' })).toEqual({
        code: 'insufficient_scope',
        status: 403,
        detail: 'The app no longer holds the packages:write scope',
        extras: { required_scope: 'packages:write' },
        headers: {},
      });
    });

    it('refuses every scoped route when the app holds no scope any more', () => {
      expect(refusal(app(), appStanding([]), { scope: 'packages:read' }).detail).toBe('The app no longer holds the packages:read scope');
      expect(platformAccess(app(), appStanding([]), {})).toMatchObject({ scopes: [] });
    });
  });
});
