import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ProblemError, ProblemCode } from '../../common/errors/problem-error';
import { newId } from '../../common/ids';
import { PlatformTokens } from './auth/platform-tokens';
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

interface ClientRow {
  id: string;
  developer_id: string;
  scopes: string[];
  client_secret_hash: string;
  previous_secret_hash: string | null;
  previous_valid: boolean;
  secret_generation: number;
  status: string;
  email_verified_at: Date | null;
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
      const [row]: Array<{
        id: string;
        family_id: string;
        app_id: string;
        user_id: string | null;
        install_id: string | null;
        scopes: string[];
        used_at: Date | null;
        revoked_at: Date | null;
        expired: boolean;
      }> = await manager.query(
        `SELECT id, family_id, app_id, user_id, install_id, scopes, used_at, revoked_at, expires_at < now() AS expired
             FROM oauth_refresh_tokens WHERE token_hash = $1 FOR UPDATE`,
        [hashToken(refreshToken)],
      );
      if (!row || row.app_id !== client.id) return { error: 'The refresh token is not valid for this client' } as const;
      if (row.revoked_at) return { error: 'The refresh token was revoked' } as const;
      if (row.used_at) {
        // Someone replayed a token that was already exchanged: assume theft and end the whole chain.
        await manager.query(`UPDATE oauth_refresh_tokens SET revoked_at = now() WHERE family_id = $1 AND revoked_at IS NULL`, [
          row.family_id,
        ]);
        return { error: 'The refresh token was already used; the token family has been revoked' } as const;
      }
      if (row.expired) return { error: 'The refresh token has expired' } as const;
      await manager.query(`UPDATE oauth_refresh_tokens SET used_at = now() WHERE id = $1`, [row.id]);
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
    manager: EntityManager,
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
    manager: EntityManager,
    grant: { appId: string; userId: string; packageId: string; redirectUri: string; scopes: string[]; codeChallenge: string },
  ): Promise<string> {
    const code = newSecret('ac');
    await manager.query(
      `INSERT INTO oauth_authorization_codes (code_hash, app_id, user_id, package_id, redirect_uri, scopes, code_challenge, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + interval '10 minutes')`,
      [hashToken(code), grant.appId, grant.userId, grant.packageId, grant.redirectUri, grant.scopes, grant.codeChallenge],
    );
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
      const [row]: Array<{
        app_id: string;
        user_id: string;
        package_id: string;
        redirect_uri: string;
        scopes: string[];
        code_challenge: string;
        used_at: Date | null;
        expired: boolean;
        install_id: string | null;
      }> = await manager.query(
        `SELECT c.app_id, c.user_id, c.package_id, c.redirect_uri, c.scopes, c.code_challenge, c.used_at, c.expires_at < now() AS expired,
                  (SELECT i.id FROM installs i WHERE i.user_id = c.user_id AND i.package_id = c.package_id AND i.status = 'active') AS install_id
             FROM oauth_authorization_codes c WHERE c.code_hash = $1 FOR UPDATE OF c`,
        [hashToken(code)],
      );
      const fail = (why: string) => oauthError('invalid_grant', 'invalid_grant', why);
      if (!row || row.app_id !== client.id) throw fail('The authorization code is not valid for this client');
      if (row.used_at) throw fail('The authorization code was already used');
      if (row.expired) throw fail('The authorization code has expired');
      if (redirectUri !== row.redirect_uri) throw fail('redirect_uri does not match the one the code was issued for');
      if (createHash('sha256').update(verifier).digest('base64url') !== row.code_challenge)
        throw fail('code_verifier does not match the code_challenge');
      if (!row.install_id) throw fail('The install this code was issued for has been removed');
      await manager.query(`UPDATE oauth_authorization_codes SET used_at = now() WHERE code_hash = $1`, [hashToken(code)]);
      return this.issueDelegated(
        manager,
        { id: client.id, developerId: client.developer_id },
        { userId: row.user_id, installId: row.install_id, scopes: row.scopes.filter((scope) => client.scopes.includes(scope)) },
        client.presentedGeneration,
      );
    });
  }

  /** Ends every token family of an install (uninstall). */
  async revokeForInstall(manager: EntityManager, installId: string): Promise<void> {
    await manager.query(`UPDATE oauth_refresh_tokens SET revoked_at = now() WHERE install_id = $1 AND revoked_at IS NULL`, [installId]);
  }

  private async storeRefreshToken(
    manager: EntityManager,
    t: { familyId: string; appId: string; userId: string | null; installId: string | null; scopes: string[]; parentId: string | null },
  ): Promise<string> {
    const token = newSecret('rt');
    await manager.query(
      `INSERT INTO oauth_refresh_tokens (id, family_id, app_id, user_id, install_id, scopes, token_hash, parent_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(days => $9))`,
      [newId('task'), t.familyId, t.appId, t.userId, t.installId, t.scopes, hashToken(token), t.parentId, REFRESH_TOKEN_LIFETIME_DAYS],
    );
    return token;
  }

  /** The app behind a public client id, for the consent step of the authorization-code flow. */
  async clientByPublicId(
    clientId: string,
  ): Promise<{ id: string; developer_id: string; name: string; redirect_uris: string[]; scopes: string[] } | null> {
    const [row]: Array<{ id: string; developer_id: string; name: string; redirect_uris: string[]; scopes: string[] }> =
      await this.dataSource.query(`SELECT id, developer_id, name, redirect_uris, scopes FROM apps WHERE client_id = $1`, [clientId]);
    return row ?? null;
  }

  private async authenticate(clientId: string, clientSecret: string, viaBasic: boolean): Promise<Client> {
    // Only a well-formed client id is looked up: hostile input (NUL bytes, megabytes) never reaches the database.
    const [row]: ClientRow[] = !CLIENT_ID_SHAPE.test(clientId)
      ? []
      : await this.dataSource.query(
          `SELECT a.id, a.developer_id, a.scopes, a.client_secret_hash, a.previous_secret_hash,
              (a.previous_secret_expires_at IS NOT NULL AND a.previous_secret_expires_at > now()) AS previous_valid,
              a.secret_generation, d.status, d.email_verified_at
         FROM apps a JOIN developers d ON d.id = a.developer_id WHERE a.client_id = $1`,
          [clientId],
        );
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
