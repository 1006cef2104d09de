import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { INSTALL_TARGETS_CHANNEL } from '../../infra/database/change-channels';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import type { AppTier } from '../../common/app-tiers';
import type { PlatformStanding } from './auth/platform-access';

/** An app as the provider API shows it (see AppsService's DTO mapping). */
export interface AppRow {
  id: string;
  developer_id: string;
  name: string;
  description: string;
  redirect_uris: string[];
  webhook_url: string | null;
  scopes: string[];
  client_id: string;
  tier: AppTier;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, developer_id, name, description, redirect_uris, webhook_url, scopes, client_id, tier, created_at, updated_at';

/** What a token request is checked against: the app's secrets and its developer's standing. */
export interface ClientRow {
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

/** The app behind a public client id, for the consent step of the authorization-code flow. */
export interface PublicClientRow {
  id: string;
  developer_id: string;
  name: string;
  redirect_uris: string[];
  scopes: string[];
}

/** Where the webhook area delivers for an app and whom it notifies. */
export interface WebhookTargetRow {
  webhook_url: string | null;
  developer_email: string;
}

/** The `apps` table: provider apps with their OAuth client credentials, scopes, tier and webhook URL. */
@Injectable()
export class AppsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  async insert(
    tx: Tx,
    app: {
      id: string;
      developerId: string;
      name: string;
      description: string;
      redirectUris: string[];
      webhookUrl: string | null;
      scopes: string[];
      clientId: string;
      clientSecretHash: string;
    },
  ): Promise<AppRow> {
    const [row] = await this.rows<AppRow>(
      `INSERT INTO apps (id, developer_id, name, description, redirect_uris, webhook_url, scopes, client_id, client_secret_hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${COLUMNS}`,
      [
        app.id,
        app.developerId,
        app.name,
        app.description,
        app.redirectUris,
        app.webhookUrl,
        app.scopes,
        app.clientId,
        app.clientSecretHash,
      ],
      tx,
    );
    return row;
  }

  findById(appId: string): Promise<AppRow | null> {
    return this.first<AppRow>(`SELECT ${COLUMNS} FROM apps WHERE id = $1`, [appId]);
  }

  listForDeveloper(developerId: string): Promise<AppRow[]> {
    return this.rows<AppRow>(`SELECT ${COLUMNS} FROM apps WHERE developer_id = $1 ORDER BY created_at, id`, [developerId]);
  }

  /**
   * Sets the given fields (null leaves one as it is); `webhookUrl` undefined
   * leaves the webhook URL, null clears it.
   */
  async update(
    tx: Tx,
    appId: string,
    changes: {
      name: string | null;
      description: string | null;
      redirectUris: string[] | null;
      webhookUrl: string | null | undefined;
      scopes: string[] | null;
    },
  ): Promise<AppRow | null> {
    const { rows } = await this.changed<AppRow>(
      `UPDATE apps SET
         name = COALESCE($2, name),
         description = COALESCE($3, description),
         redirect_uris = COALESCE($4, redirect_uris),
         webhook_url = CASE WHEN $5::boolean THEN $6 ELSE webhook_url END,
         scopes = COALESCE($7, scopes),
         updated_at = now()
       WHERE id = $1 RETURNING ${COLUMNS}`,
      [
        appId,
        changes.name,
        changes.description,
        changes.redirectUris,
        changes.webhookUrl !== undefined,
        changes.webhookUrl ?? null,
        changes.scopes,
      ],
      tx,
    );
    return rows[0] ?? null;
  }

  async setTier(appId: string, tier: AppTier): Promise<AppRow | null> {
    const { rows } = await this.changed<AppRow>(`UPDATE apps SET tier = $2, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`, [
      appId,
      tier,
    ]);
    // Every remembered target of this instance (rare: tier changes are operator actions); other instances forget per package.
    this.forgetAfterTransaction(undefined, INSTALL_TARGETS_CHANNEL, null);
    return rows[0] ?? null;
  }

  async tierOf(appId: string): Promise<AppTier | null> {
    return (await this.first<{ tier: AppTier }>(`SELECT tier FROM apps WHERE id = $1`, [appId]))?.tier ?? null;
  }

  /**
   * Stores a new client secret's hash. With a grace period the current hash
   * becomes the previous one until the grace ends; the generation counts up.
   */
  async rotateSecret(appId: string, secretHash: string, gracePeriodSeconds: number): Promise<AppRow | null> {
    const { rows } = await this.changed<AppRow>(
      `UPDATE apps SET
         previous_secret_hash = CASE WHEN $3 > 0 THEN client_secret_hash ELSE NULL END,
         previous_secret_expires_at = CASE WHEN $3 > 0 THEN now() + make_interval(secs => $3) ELSE NULL END,
         client_secret_hash = $2, secret_generation = secret_generation + 1, secret_rotated_at = now(), updated_at = now()
       WHERE id = $1 RETURNING ${COLUMNS}`,
      [appId, secretHash, gracePeriodSeconds],
    );
    return rows[0] ?? null;
  }

  webhookTarget(appId: string): Promise<WebhookTargetRow | null> {
    return this.first<WebhookTargetRow>(
      `SELECT a.webhook_url, d.email AS developer_email FROM apps a JOIN developers d ON d.id = a.developer_id WHERE a.id = $1`,
      [appId],
    );
  }

  findPublicClient(clientId: string): Promise<PublicClientRow | null> {
    return this.first<PublicClientRow>(`SELECT id, developer_id, name, redirect_uris, scopes FROM apps WHERE client_id = $1`, [clientId]);
  }

  findClient(clientId: string): Promise<ClientRow | null> {
    return this.first<ClientRow>(
      `SELECT a.id, a.developer_id, a.scopes, a.client_secret_hash, a.previous_secret_hash,
              (a.previous_secret_expires_at IS NOT NULL AND a.previous_secret_expires_at > now()) AS previous_valid,
              a.secret_generation, d.status, d.email_verified_at
         FROM apps a JOIN developers d ON d.id = a.developer_id WHERE a.client_id = $1`,
      [clientId],
    );
  }

  /**
   * What an app token stands on: its developer, the app with its current
   * scopes when the token's secret generation still holds (current, or the
   * previous one within its grace) and, for a delegated token, its install
   * still active, with the end of a previous generation's grace period
   * (`trusted_until`). Null: the token stands on nothing any more.
   */
  appStanding(token: {
    developerId: string;
    appId: string;
    secretGeneration?: number;
    installId?: string;
    userId?: string;
  }): Promise<(PlatformStanding & { trusted_until: Date | null }) | null> {
    return this.first<PlatformStanding & { trusted_until: Date | null }>(
      `SELECT d.status, d.email_verified_at, a.scopes AS app_scopes,
              -- A token of the previous secret generation stands until the grace period ends.
              CASE WHEN $3::int IS NOT NULL AND a.secret_generation <> $3 THEN a.previous_secret_expires_at END AS trusted_until
         FROM developers d JOIN apps a ON a.developer_id = d.id AND a.id = $2
        WHERE d.id = $1
          AND ($3::int IS NULL OR a.secret_generation = $3 OR (a.secret_generation = $3 + 1 AND a.previous_secret_expires_at > now()))
          AND ($4::text IS NULL OR EXISTS (
                SELECT 1 FROM installs i WHERE i.id = $4 AND i.user_id = $5 AND i.app_id = a.id AND i.status = 'active'))`,
      [token.developerId, token.appId, token.secretGeneration ?? null, token.installId ?? null, token.userId ?? null],
    );
  }
}
