import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';

/** An authorization code as the authorization_code grant judges it, with the active install it was issued for. */
export interface AuthorizationCodeRow {
  app_id: string;
  user_id: string;
  package_id: string;
  redirect_uri: string;
  scopes: string[];
  code_challenge: string;
  used_at: Date | null;
  expired: boolean;
  install_id: string | null;
}

/** The `oauth_authorization_codes` table: single-use codes of the authorization-code flow, stored as hashes, for ten minutes. */
@Injectable()
export class OAuthAuthorizationCodesRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  async insert(
    tx: Tx,
    code: {
      codeHash: string;
      appId: string;
      userId: string;
      packageId: string;
      redirectUri: string;
      scopes: string[];
      codeChallenge: string;
    },
  ): Promise<void> {
    await this.execute(
      `INSERT INTO oauth_authorization_codes (code_hash, app_id, user_id, package_id, redirect_uri, scopes, code_challenge, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + interval '10 minutes')`,
      [code.codeHash, code.appId, code.userId, code.packageId, code.redirectUri, code.scopes, code.codeChallenge],
      tx,
    );
  }

  /** The code with this hash, locked until the end of `tx`. */
  findForUpdate(tx: Tx, codeHash: string): Promise<AuthorizationCodeRow | null> {
    return this.first<AuthorizationCodeRow>(
      `SELECT c.app_id, c.user_id, c.package_id, c.redirect_uri, c.scopes, c.code_challenge, c.used_at, c.expires_at < now() AS expired,
                  (SELECT i.id FROM installs i WHERE i.user_id = c.user_id AND i.package_id = c.package_id AND i.status = 'active') AS install_id
             FROM oauth_authorization_codes c WHERE c.code_hash = $1 FOR UPDATE OF c`,
      [codeHash],
      tx,
    );
  }

  async markUsed(tx: Tx, codeHash: string): Promise<void> {
    await this.changed(`UPDATE oauth_authorization_codes SET used_at = now() WHERE code_hash = $1`, [codeHash], tx);
  }
}
