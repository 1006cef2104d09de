import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';

/** A refresh token as the refresh grant judges it. */
export interface RefreshTokenRow {
  id: string;
  family_id: string;
  app_id: string;
  user_id: string | null;
  install_id: string | null;
  scopes: string[];
  used_at: Date | null;
  revoked_at: Date | null;
  expired: boolean;
}

/** The `oauth_refresh_tokens` table: single-use refresh tokens in families (RFC 9700 §4.14), stored as hashes. */
@Injectable()
export class OAuthRefreshTokensRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  async insert(
    tx: Tx,
    token: {
      id: string;
      familyId: string;
      appId: string;
      userId: string | null;
      installId: string | null;
      scopes: string[];
      tokenHash: string;
      parentId: string | null;
      lifetimeDays: number;
    },
  ): Promise<void> {
    await this.execute(
      `INSERT INTO oauth_refresh_tokens (id, family_id, app_id, user_id, install_id, scopes, token_hash, parent_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() + make_interval(days => $9))`,
      [
        token.id,
        token.familyId,
        token.appId,
        token.userId,
        token.installId,
        token.scopes,
        token.tokenHash,
        token.parentId,
        token.lifetimeDays,
      ],
      tx,
    );
  }

  /** The token with this hash, locked until the end of `tx`. */
  findForUpdate(tx: Tx, tokenHash: string): Promise<RefreshTokenRow | null> {
    return this.first<RefreshTokenRow>(
      `SELECT id, family_id, app_id, user_id, install_id, scopes, used_at, revoked_at, expires_at < now() AS expired
             FROM oauth_refresh_tokens WHERE token_hash = $1 FOR UPDATE`,
      [tokenHash],
      tx,
    );
  }

  async markUsed(tx: Tx, id: string): Promise<void> {
    await this.changed(`UPDATE oauth_refresh_tokens SET used_at = now() WHERE id = $1`, [id], tx);
  }

  async revokeFamily(tx: Tx, familyId: string): Promise<void> {
    await this.changed(`UPDATE oauth_refresh_tokens SET revoked_at = now() WHERE family_id = $1 AND revoked_at IS NULL`, [familyId], tx);
  }

  async revokeForInstall(tx: Tx, installId: string): Promise<void> {
    await this.changed(`UPDATE oauth_refresh_tokens SET revoked_at = now() WHERE install_id = $1 AND revoked_at IS NULL`, [installId], tx);
  }
}
