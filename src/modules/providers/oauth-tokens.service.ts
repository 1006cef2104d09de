import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ProblemError, ProblemCode } from '../../common/errors/problem-error';
import { newId } from '../../common/ids';
import type { Tx } from '../../infra/database/sql-repository';
import { AppsRepository, ClientRow, PublicClientRow } from './apps.repository';
import { PlatformTokens } from './auth/platform-tokens';
import { OAuthAuthorizationCodesRepository } from './oauth-authorization-codes.repository';
import { OAuthRefreshTokensRepository } from './oauth-refresh-tokens.repository';
import { hashToken, newSecret, sameHash } from './secrets';

/** RFC 6749 §5.1 token response. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  refresh_token?: string;
}

export const REFRESH_TOKEN_LIFETIME_DAYS = 30;
/** Client ids as AppsService issues them. */
const CLIENT_ID_SHAPE = /^cid_[0-9a-f]{32}$/;

/** A problem that also carries the RFC 6749 §5.2 `error` and `error_description` members. */
export function oauthError(code: ProblemCode, error: string, description: string, headers: Record<string, string> = {}): ProblemError {
  return new ProblemError(code, description, { error, error_description: description }, headers);
}

/** An authenticated client, and which generation of its secret it authenticated with. */
type Client = ClientRow & { presentedGeneration: number };

/**
 * The platform's OAuth token endpoint logic: the client credentials grant and
 * the refresh grant over token families with rotation and reuse detection
 * (RFC 9700 §4.14: presenting a used refresh token revokes its whole family).
 */
@Injectable()
export class OAuthTokens {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly tokens: PlatformTokens,
    private readonly apps: AppsRepository,
    private readonly refreshTokens: OAuthRefreshTokensRepository,
    private readonly codes: OAuthAuthorizationCodesRepository,
  ) {}

  async clientCredentials(
    clientId: string,
    clientSecret: string,
    requestedScope: string | undefined,
    viaBasic: boolean,
  ): Promise<TokenResponse> {
    const client = await this.authenticate(clientId, clientSecret, viaBasic);
    const scopes = this.narrow(client.scopes, requestedScope);
    const expiresAt = new Date(Date.now() + this.tokens.ttlSeconds * 1000);
    return {
      access_token: await this.tokens.forApp({ id: client.id, developerId: client.developer_id }, scopes, expiresAt, {
        secretGeneration: client.presentedGeneration,
      }),
      token_type: 'Bearer',
      expires_in: this.tokens.ttlSeconds,
      scope: scopes.join(' '),
    };
  }

  async refresh(clientId: string, clientSecret: string, refreshToken: string, viaBasic: boolean): Promise<TokenResponse> {
    const client = await this.authenticate(clientId, clientSecret, viaBasic);
    const outcome = await this.dataSource.transaction(async (manager) => {
      const row = await this.refreshTokens.findForUpdate(manager, hashToken(refreshToken));
      if (!row || row.app_id !== client.id) return { error: 'The refresh token is not valid for this client' } as const;
      if (row.revoked_at) return { error: 'The refresh token was revoked' } as const;
      if (row.used_at) {
        // Someone replayed a token that was already exchanged: assume theft and end the whole chain.
        await this.refreshTokens.revokeFamily(manager, row.family_id);
        return { error: 'The refresh token was already used; the token family has been revoked' } as const;
      }
      if (row.expired) return { error: 'The refresh token has expired' } as const;
      await this.refreshTokens.markUsed(manager, row.id);
      const next = await this.storeRefreshToken(manager, {
        familyId: row.family_id,
        appId: row.app_id,
        userId: row.user_id,
        installId: row.install_id,
        scopes: row.scopes,
        parentId: row.id,
      });
      return { row, next } as const;
    });
    if ('error' in outcome) throw oauthError('invalid_grant', 'invalid_grant', outcome.error ?? 'invalid refresh token');
    const { row, next } = outcome;
    const expiresAt = new Date(Date.now() + this.tokens.ttlSeconds * 1000);
    const delegation = row.user_id && row.install_id ? { userId: row.user_id, installId: row.install_id } : undefined;
    // A grant never outgrows the app: scopes the app has since given up are not issued again.
    const scopes = row.scopes.filter((scope) => client.scopes.includes(scope));
    return {
      access_token: await this.tokens.forApp({ id: client.id, developerId: client.developer_id }, scopes, expiresAt, {
        delegation,
        secretGeneration: client.presentedGeneration,
      }),
      token_type: 'Bearer',
      expires_in: this.tokens.ttlSeconds,
      scope: scopes.join(' '),
      refresh_token: next,
    };
  }

  /**
   * Starts a token family for a user's grant to an app (an install): an access
   * token acting for the user and a refresh token. Runs in the caller's transaction.
   */
  async issueDelegated(
    manager: Tx,
    app: { id: string; developerId: string },
    grant: { userId: string; installId: string; scopes: string[] },
    secretGeneration?: number,
  ): Promise<TokenResponse & { refresh_token: string }> {
    const refreshToken = await this.storeRefreshToken(manager, {
      familyId: newId('task'),
      appId: app.id,
      userId: grant.userId,
      installId: grant.installId,
      scopes: grant.scopes,
      parentId: null,
    });
    const expiresAt = new Date(Date.now() + this.tokens.ttlSeconds * 1000);
    return {
      access_token: await this.tokens.forApp(app, grant.scopes, expiresAt, {
        delegation: { userId: grant.userId, installId: grant.installId },
        secretGeneration,
      }),
      token_type: 'Bearer',
      expires_in: this.tokens.ttlSeconds,
      scope: grant.scopes.join(' '),
      refresh_token: refreshToken,
    };
  }

  /**
   * Stores a single-use authorization code (RFC 6749 §4.1, PKCE S256 per RFC 7636)
   * for a user's consent to an app; only its hash is kept, for ten minutes.
   */
  async issueAuthorizationCode(
    manager: Tx,
    grant: { appId: string; userId: string; packageId: string; redirectUri: string; scopes: string[]; codeChallenge: string },
  ): Promise<string> {
    const code = newSecret('ac');
    await this.codes.insert(manager, {
      codeHash: hashToken(code),
      appId: grant.appId,
      userId: grant.userId,
      packageId: grant.packageId,
      redirectUri: grant.redirectUri,
      scopes: grant.scopes,
      codeChallenge: grant.codeChallenge,
    });
    return code;
  }

  /** The authorization_code grant: redeems a code once, checking client, redirect URI and the PKCE verifier. */
  async authorizationCode(
    clientId: string,
    clientSecret: string,
    code: string,
    redirectUri: string | undefined,
    verifier: string | undefined,
    viaBasic: boolean,
  ): Promise<TokenResponse> {
    const client = await this.authenticate(clientId, clientSecret, viaBasic);
    if (!verifier || !/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) {
      throw oauthError('invalid_grant', 'invalid_grant', 'code_verifier is required: 43 to 128 characters of [A-Za-z0-9._~-] (RFC 7636)');
    }
    return this.dataSource.transaction(async (manager) => {
      const row = await this.codes.findForUpdate(manager, hashToken(code));
      const fail = (why: string) => oauthError('invalid_grant', 'invalid_grant', why);
      if (!row || row.app_id !== client.id) throw fail('The authorization code is not valid for this client');
      if (row.used_at) throw fail('The authorization code was already used');
      if (row.expired) throw fail('The authorization code has expired');
      if (redirectUri !== row.redirect_uri) throw fail('redirect_uri does not match the one the code was issued for');
      if (createHash('sha256').update(verifier).digest('base64url') !== row.code_challenge)
        throw fail('code_verifier does not match the code_challenge');
      if (!row.install_id) throw fail('The install this code was issued for has been removed');
      await this.codes.markUsed(manager, hashToken(code));
      return this.issueDelegated(
        manager,
        { id: client.id, developerId: client.developer_id },
        { userId: row.user_id, installId: row.install_id, scopes: row.scopes.filter((scope) => client.scopes.includes(scope)) },
        client.presentedGeneration,
      );
    });
  }

  /** Ends every token family of an install (uninstall). */
  async revokeForInstall(manager: Tx, installId: string): Promise<void> {
    await this.refreshTokens.revokeForInstall(manager, installId);
  }

  private async storeRefreshToken(
    manager: Tx,
    t: { familyId: string; appId: string; userId: string | null; installId: string | null; scopes: string[]; parentId: string | null },
  ): Promise<string> {
    const token = newSecret('rt');
    await this.refreshTokens.insert(manager, {
      id: newId('task'),
      ...t,
      tokenHash: hashToken(token),
      lifetimeDays: REFRESH_TOKEN_LIFETIME_DAYS,
    });
    return token;
  }

  /** The app behind a public client id, for the consent step of the authorization-code flow. */
  async clientByPublicId(clientId: string): Promise<PublicClientRow | null> {
    return this.apps.findPublicClient(clientId);
  }

  private async authenticate(clientId: string, clientSecret: string, viaBasic: boolean): Promise<Client> {
    // Only a well-formed client id is looked up: hostile input (NUL bytes, megabytes) never reaches the database.
    const row = !CLIENT_ID_SHAPE.test(clientId) ? undefined : ((await this.apps.findClient(clientId)) ?? undefined);
    const presented = hashToken(clientSecret);
    const current = row !== undefined && sameHash(row.client_secret_hash, presented);
    const previous =
      row !== undefined &&
      !current &&
      row.previous_valid &&
      row.previous_secret_hash !== null &&
      sameHash(row.previous_secret_hash, presented);
    if (!row || !(current || previous)) {
      // RFC 6749 §5.2: 401 with a challenge for the scheme the client used.
      throw oauthError(
        'invalid_client',
        'invalid_client',
        'Client authentication failed',
        viaBasic ? { 'WWW-Authenticate': 'Basic realm="service", charset="UTF-8"' } : {},
      );
    }
    if (row.status === 'suspended')
      throw oauthError('account_suspended', 'unauthorized_client', 'The developer account of this app is suspended');
    if (!row.email_verified_at)
      throw oauthError('email_not_verified', 'unauthorized_client', 'Verify the developer account email before requesting tokens');
    return { ...row, presentedGeneration: current ? row.secret_generation : row.secret_generation - 1 };
  }

  private narrow(granted: string[], requested: string | undefined): string[] {
    if (requested === undefined || requested.trim() === '') return granted;
    const asked = [...new Set(requested.split(' ').filter(Boolean))];
    const missing = asked.filter((s) => !granted.includes(s));
    if (missing.length > 0) {
      throw oauthError(
        'insufficient_scope',
        'invalid_scope',
        `The app does not hold the scope ${missing.join(', ')}; it may request: ${granted.join(' ')}`,
      );
    }
    return asked;
  }
}
