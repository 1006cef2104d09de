import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ProblemError } from '../../common/errors/problem-error';
import { isId, newId } from '../../common/ids';
import { OutboundHttp } from '../../common/http/outbound-http';
import type { Tx } from '../../infra/database/sql-repository';
import { APP_TIERS, AppTier } from '../../common/app-tiers';
import type { AppWebhookSetup } from './app-webhook-setup';
import { AppRow, AppsRepository } from './apps.repository';
import { PlatformStandings } from './auth/platform-standings';
import { PlatformPrincipal } from './auth/platform-principal';
import { AppDto, CreateAppDto, UpdateAppDto } from './dto/app.dto';
import { PLATFORM_SCOPES } from './scopes';
import { hashToken, newSecret } from './secrets';

/** Longest a rotated-out client secret may keep working. */
export const MAX_SECRET_GRACE_SECONDS = 86_400;

function toDto(row: AppRow, clientSecret?: string, webhookSecret?: string | null): AppDto {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    redirect_uris: row.redirect_uris,
    webhook_url: row.webhook_url,
    scopes: row.scopes,
    client_id: row.client_id,
    tier: row.tier,
    ...(clientSecret ? { client_secret: clientSecret } : {}),
    ...(webhookSecret ? { webhook_secret: webhookSecret } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Onboarding step three: apps with OAuth client credentials, scopes and a webhook endpoint. */
@Injectable()
export class AppsService {
  private webhookSetup?: AppWebhookSetup;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly http: OutboundHttp,
    private readonly apps: AppsRepository,
    private readonly standings: PlatformStandings,
  ) {}

  /** The webhooks area plugs in what a `webhook_url` sets up (see AppWebhookSetup). */
  useWebhookSetup(setup: AppWebhookSetup): void {
    this.webhookSetup = setup;
  }

  /**
   * Registers an app. With a `webhook_url` it gets a working webhook in the
   * same transaction: a profile subscribed to every event type and its
   * signing secret, shown once as `webhook_secret`.
   */
  async create(developerId: string, input: CreateAppDto): Promise<AppDto> {
    const webhookUrl = input.webhook_url === undefined ? null : (await this.checkWebhookUrl(input.webhook_url)).toString();
    const clientSecret = newSecret('cs');
    return this.dataSource.transaction(async (manager) => {
      const row = await this.apps.insert(manager, {
        id: newId('app'),
        developerId,
        name: input.name.trim(),
        description: input.description ?? '',
        redirectUris: input.redirect_uris ?? [],
        webhookUrl,
        scopes: input.scopes ?? [...PLATFORM_SCOPES],
        clientId: `cid_${randomBytes(16).toString('hex')}`,
        clientSecretHash: hashToken(clientSecret),
      });
      const webhookSecret = webhookUrl ? await this.provisionWebhook(manager, row.id) : null;
      return toDto(row, clientSecret, webhookSecret);
    });
  }

  async list(principal: PlatformPrincipal): Promise<{ apps: AppDto[] }> {
    const rows: AppRow[] =
      principal.kind === 'app'
        ? [await this.apps.findById(principal.appId)].filter((row): row is AppRow => row !== null)
        : await this.apps.listForDeveloper(principal.developerId);
    return { apps: rows.map((row) => toDto(row)) };
  }

  async get(principal: PlatformPrincipal, appId: string): Promise<AppDto> {
    return toDto(await this.owned(principal, appId));
  }

  /**
   * Updates the app. Setting a `webhook_url` on an app without a webhook
   * profile creates one, as at registration, and the answer carries its
   * `webhook_secret` (once).
   */
  async update(principal: PlatformPrincipal, appId: string, input: UpdateAppDto): Promise<AppDto> {
    const app = await this.owned(principal, appId);
    const webhookUrl = input.webhook_url === undefined ? undefined : (await this.checkWebhookUrl(input.webhook_url)).toString();
    const updated = await this.dataSource.transaction(async (manager) => {
      const row = (await this.apps.update(manager, appId, {
        name: input.name?.trim() ?? null,
        description: input.description ?? null,
        redirectUris: input.redirect_uris ?? null,
        webhookUrl,
        scopes: input.scopes ?? null,
      }))!;
      const webhookSecret = webhookUrl !== undefined ? await this.provisionWebhook(manager, appId) : null;
      return toDto(row, undefined, webhookSecret);
    });
    // New scopes hold for the app's tokens from the next call on.
    if (input.scopes !== undefined) await this.standings.forgetDeveloperEverywhere(app.developer_id);
    return updated;
  }

  /** Operator API: moves an app to another provider tier (its platform limits follow at once). */
  async setTier(appId: string, tier: AppTier): Promise<AppDto> {
    if (!(APP_TIERS as readonly string[]).includes(tier)) {
      throw new ProblemError('invalid_format', `tier must be one of ${APP_TIERS.join(', ')}`, { field: 'tier' });
    }
    const row = isId(appId, 'app') ? await this.apps.setTier(appId, tier) : null;
    if (!row) throw new ProblemError('not_found', `No app ${appId}`);
    return toDto(row);
  }

  /** The app's provider tier; Free for an unknown app (worker side, no principal). */
  async tierOf(appId: string): Promise<AppTier> {
    return (await this.apps.tierOf(appId)) ?? 'free';
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
    const app = await this.owned(principal, appId);
    const clientSecret = newSecret('cs');
    const row = (await this.apps.rotateSecret(appId, hashToken(clientSecret), gracePeriodSeconds))!;
    await this.standings.forgetDeveloperEverywhere(app.developer_id);
    return toDto(row, clientSecret);
  }

  /**
   * Where the webhook area delivers for an app and whom it notifies (worker
   * side, no principal): the app's `webhook_url` and its developer's email.
   */
  async webhookTarget(appId: string): Promise<{ webhook_url: string | null; developer_email: string } | null> {
    return this.apps.webhookTarget(appId);
  }

  /**
   * The app when the principal may act on it. Another developer's app answers
   * `insufficient_scope` (403) as the spec prescribes; an unknown id `not_found`.
   */
  async owned(principal: PlatformPrincipal, appId: string): Promise<AppRow> {
    const row = isId(appId, 'app') ? await this.apps.findById(appId) : null;
    if (!row) throw new ProblemError('not_found', `No app ${appId}`);
    const allowed = principal.kind === 'app' ? principal.appId === row.id : principal.developerId === row.developer_id;
    if (!allowed) throw new ProblemError('insufficient_scope', `App ${appId} belongs to another developer`);
    return row;
  }

  /** Through the outbound client's rules and resolver, the ones every delivery is checked with again. */
  private checkWebhookUrl(url: string): Promise<URL> {
    return this.http.assertCallable(url, 'webhook_url');
  }

  private async provisionWebhook(manager: Tx, appId: string): Promise<string | null> {
    if (!this.webhookSetup) throw new Error('No webhook set-up is registered: WebhooksModule must be loaded with ProvidersModule');
    return this.webhookSetup.ensureProfile(manager, appId);
  }
}
