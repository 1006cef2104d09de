import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ProblemError } from '../../common/errors/problem-error';
import { isId, newId } from '../../common/ids';
import { assertCallableTarget } from '../../common/http/target-policy';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { PlatformPrincipal } from './auth/platform-principal';
import { AppDto, CreateAppDto, UpdateAppDto } from './dto/app.dto';
import { PLATFORM_SCOPES } from './scopes';
import { hashToken, newSecret } from './secrets';

export interface AppRow {
  id: string;
  developer_id: string;
  name: string;
  description: string;
  redirect_uris: string[];
  webhook_url: string | null;
  scopes: string[];
  client_id: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, developer_id, name, description, redirect_uris, webhook_url, scopes, client_id, created_at, updated_at';
/** Longest a rotated-out client secret may keep working. */
export const MAX_SECRET_GRACE_SECONDS = 86_400;

function toDto(row: AppRow, clientSecret?: string): AppDto {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    redirect_uris: row.redirect_uris,
    webhook_url: row.webhook_url,
    scopes: row.scopes,
    client_id: row.client_id,
    ...(clientSecret ? { client_secret: clientSecret } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Onboarding step three: apps with OAuth client credentials, scopes and a webhook endpoint. */
@Injectable()
export class AppsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(developerId: string, input: CreateAppDto): Promise<AppDto> {
    const webhookUrl = input.webhook_url === undefined ? null : (await this.checkWebhookUrl(input.webhook_url)).toString();
    const clientSecret = newSecret('cs');
    const [row]: AppRow[] = await this.dataSource.query(
      `INSERT INTO apps (id, developer_id, name, description, redirect_uris, webhook_url, scopes, client_id, client_secret_hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${COLUMNS}`,
      [
        newId('app'),
        developerId,
        input.name.trim(),
        input.description ?? '',
        input.redirect_uris ?? [],
        webhookUrl,
        input.scopes ?? [...PLATFORM_SCOPES],
        `cid_${randomBytes(16).toString('hex')}`,
        hashToken(clientSecret),
      ],
    );
    return toDto(row, clientSecret);
  }

  async list(principal: PlatformPrincipal): Promise<{ apps: AppDto[] }> {
    const rows: AppRow[] =
      principal.kind === 'app'
        ? await this.dataSource.query(`SELECT ${COLUMNS} FROM apps WHERE id = $1`, [principal.appId])
        : await this.dataSource.query(`SELECT ${COLUMNS} FROM apps WHERE developer_id = $1 ORDER BY created_at, id`, [
            principal.developerId,
          ]);
    return { apps: rows.map((row) => toDto(row)) };
  }

  async get(principal: PlatformPrincipal, appId: string): Promise<AppDto> {
    return toDto(await this.owned(principal, appId));
  }

  async update(principal: PlatformPrincipal, appId: string, input: UpdateAppDto): Promise<AppDto> {
    await this.owned(principal, appId);
    const webhookUrl = input.webhook_url === undefined ? undefined : (await this.checkWebhookUrl(input.webhook_url)).toString();
    // UPDATE … RETURNING answers [rows, affectedCount] through TypeORM's PostgreSQL driver.
    const [[row]]: [AppRow[], number] = await this.dataSource.query(
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
        input.name?.trim() ?? null,
        input.description ?? null,
        input.redirect_uris ?? null,
        webhookUrl !== undefined,
        webhookUrl ?? null,
        input.scopes ?? null,
      ],
    );
    return toDto(row);
  }

  /**
   * Issues a new client secret (shown once). The previous one stops working at
   * once, or after `gracePeriodSeconds` (at most a day) so deployments can roll over;
   * so do the access tokens it obtained (their `sgen` claim names its generation,
   * checked by PlatformAuthGuard), as a leaked secret's tokens must end with it.
   */
  async rotateSecret(principal: PlatformPrincipal, appId: string, gracePeriodSeconds = 0): Promise<AppDto> {
    if (!Number.isInteger(gracePeriodSeconds) || gracePeriodSeconds < 0 || gracePeriodSeconds > MAX_SECRET_GRACE_SECONDS) {
      throw new ProblemError('invalid_format', `grace_period_seconds must be an integer from 0 to ${MAX_SECRET_GRACE_SECONDS}`, {
        field: 'grace_period_seconds',
      });
    }
    await this.owned(principal, appId);
    const clientSecret = newSecret('cs');
    const [[row]]: [AppRow[], number] = await this.dataSource.query(
      `UPDATE apps SET
         previous_secret_hash = CASE WHEN $3 > 0 THEN client_secret_hash ELSE NULL END,
         previous_secret_expires_at = CASE WHEN $3 > 0 THEN now() + make_interval(secs => $3) ELSE NULL END,
         client_secret_hash = $2, secret_generation = secret_generation + 1, secret_rotated_at = now(), updated_at = now()
       WHERE id = $1 RETURNING ${COLUMNS}`,
      [appId, hashToken(clientSecret), gracePeriodSeconds],
    );
    return toDto(row, clientSecret);
  }

  /**
   * Where the webhook area delivers for an app and whom it notifies (worker
   * side, no principal): the app's `webhook_url` and its developer's email.
   */
  async webhookTarget(appId: string): Promise<{ webhook_url: string | null; developer_email: string } | null> {
    const [row]: Array<{ webhook_url: string | null; developer_email: string }> = await this.dataSource.query(
      `SELECT a.webhook_url, d.email AS developer_email FROM apps a JOIN developers d ON d.id = a.developer_id WHERE a.id = $1`,
      [appId],
    );
    return row ?? null;
  }

  /**
   * The app when the principal may act on it. Another developer's app answers
   * `insufficient_scope` (403) as the spec prescribes; an unknown id `not_found`.
   */
  async owned(principal: PlatformPrincipal, appId: string): Promise<AppRow> {
    const [row]: AppRow[] = isId(appId, 'app') ? await this.dataSource.query(`SELECT ${COLUMNS} FROM apps WHERE id = $1`, [appId]) : [];
    if (!row) throw new ProblemError('not_found', `No app ${appId}`);
    const allowed = principal.kind === 'app' ? principal.appId === row.id : principal.developerId === row.developer_id;
    if (!allowed) throw new ProblemError('insufficient_scope', `App ${appId} belongs to another developer`);
    return row;
  }

  private checkWebhookUrl(url: string): Promise<URL> {
    return assertCallableTarget(url, 'webhook_url', { allowPrivate: this.config.allowPrivateTargets });
  }
}
