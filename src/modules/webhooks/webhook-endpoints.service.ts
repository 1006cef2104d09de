import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { ProblemError } from '../../common/errors/problem-error';
import { OutboundHttp } from '../../common/http/outbound-http';
import { isId, newId } from '../../common/ids';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { AppsService } from '../providers/apps.service';
import { PlatformPrincipal } from '../providers/auth/platform-principal';
import { CreateWebhookEndpointDto, UpdateWebhookEndpointDto, WebhookEndpointDto } from './dto/webhook-endpoints.dto';
import { EndpointCheck } from './endpoint-check';
import { EndpointRecord, WebhookEndpointsRepository } from './webhook-endpoints.repository';
import { DEFAULT_TIMEOUT_MS, endpointLimit, MAX_ENDPOINTS_PER_APP, normaliseTypes, rotationDue } from './webhook-profiles.service';
import { newWebhookSecret } from './webhook-signature';

/**
 * An app's webhook endpoints (Svix's endpoints, Stripe's webhook endpoints):
 * each with its URL, event-type filter, signing secret, timeout and enabled
 * state. The primary endpoint is the spec's profile and is listed and edited
 * here too; its URL stays the app's `webhook_url`. A new endpoint, or one
 * whose URL changes, is checked at once with a signed `ping` (EndpointCheck).
 */
@Injectable()
export class WebhookEndpoints {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly repository: WebhookEndpointsRepository,
    private readonly apps: AppsService,
    private readonly check: EndpointCheck,
    private readonly http: OutboundHttp,
    private readonly secretBox: SecretBox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async list(principal: PlatformPrincipal, appId: string): Promise<{ endpoints: WebhookEndpointDto[]; limit: number }> {
    await this.apps.owned(principal, appId);
    const rows = await this.repository.listForApp(appId);
    return { endpoints: rows.map((row) => toDto(row)), limit: MAX_ENDPOINTS_PER_APP };
  }

  async get(principal: PlatformPrincipal, appId: string, endpointId: string): Promise<WebhookEndpointDto> {
    return toDto(await this.owned(principal, appId, endpointId));
  }

  /**
   * A new endpoint with its own secret (the provider's, or one generated and
   * shown in this answer only), at most
   * 16 per app counted under a lock, then checked with a signed ping unless
   * it was created paused.
   */
  async create(principal: PlatformPrincipal, appId: string, input: CreateWebhookEndpointDto): Promise<WebhookEndpointDto> {
    await this.apps.owned(principal, appId);
    const url = (await this.http.assertCallable(input.url, 'url')).toString();
    const secret = input.secret ?? newWebhookSecret();
    const id = newId('whe');
    await this.dataSource.transaction(async (manager) => {
      if ((await this.repository.countLocked(manager, appId)) >= MAX_ENDPOINTS_PER_APP) throw endpointLimit(appId);
      await this.repository.insert(manager, {
        id,
        appId,
        primary: false,
        url,
        description: input.description?.trim() ?? '',
        eventTypes: normaliseTypes(input.event_types) ?? ['*'],
        sealedSecret: this.secretBox.seal(secret),
        timeoutMs: input.timeout_seconds ? input.timeout_seconds * 1000 : DEFAULT_TIMEOUT_MS,
        enabled: input.enabled !== false,
      });
    });
    const row = (await this.repository.find(appId, id))!;
    if (row.disabled_at === null) row.last_ping = await this.check.run(row);
    // A secret the provider chose is theirs already; a generated one is shown this once.
    return toDto(row, input.secret ? undefined : secret);
  }

  /**
   * Applies the changes. A new URL is checked with a signed ping (the
   * primary endpoint's URL is the app's `webhook_url`, changed through the
   * app so both stay one value).
   */
  async update(
    principal: PlatformPrincipal,
    appId: string,
    endpointId: string,
    input: UpdateWebhookEndpointDto,
  ): Promise<WebhookEndpointDto> {
    const current = await this.owned(principal, appId, endpointId);
    let url: string | null = null;
    if (input.url !== undefined) {
      if (current.is_primary) url = (await this.apps.update(principal, appId, { webhook_url: input.url })).webhook_url;
      else url = (await this.http.assertCallable(input.url, 'url')).toString();
    }
    const row = await this.repository.update(appId, endpointId, {
      url,
      description: input.description?.trim() ?? null,
      eventTypes: normaliseTypes(input.event_types),
      timeoutMs: input.timeout_seconds ? input.timeout_seconds * 1000 : null,
      enabled: input.enabled ?? null,
    });
    if (!row) throw notFound(appId, endpointId);
    if (url !== null && url !== current.target_url && row.disabled_at === null) row.last_ping = await this.check.run(row);
    return toDto(row);
  }

  /** Checks the endpoint again with a signed ping (after fixing the receiver, say). */
  async ping(principal: PlatformPrincipal, appId: string, endpointId: string): Promise<WebhookEndpointDto> {
    const row = await this.owned(principal, appId, endpointId);
    row.last_ping = await this.check.run(row);
    return toDto(row);
  }

  /** Deletes an endpoint and its delivery log. The primary one is the app's profile and stays. */
  async remove(principal: PlatformPrincipal, appId: string, endpointId: string): Promise<void> {
    const row = await this.owned(principal, appId, endpointId);
    if (row.is_primary) {
      throw new ProblemError(
        'conflict',
        `Endpoint ${endpointId} is the app's webhook profile (primary); change or disable it instead, with PATCH or PUT /v1/providers/apps/${appId}/webhook`,
      );
    }
    if (!(await this.repository.deleteSecondary(appId, endpointId))) throw notFound(appId, endpointId);
  }

  /** A new secret (shown once); the previous one keeps signing beside it for the grace period. */
  async rotate(principal: PlatformPrincipal, appId: string, endpointId: string): Promise<WebhookEndpointDto> {
    await this.owned(principal, appId, endpointId);
    const secret = newWebhookSecret();
    const row = await this.repository.rotateSecret(appId, endpointId, this.secretBox.seal(secret), this.config.webhooks.secretGraceSeconds);
    if (!row) throw notFound(appId, endpointId);
    return toDto(row, secret);
  }

  /** The endpoint when the principal may act on the app; another app's endpoint (or none) is 404. */
  private async owned(principal: PlatformPrincipal, appId: string, endpointId: string): Promise<EndpointRecord> {
    await this.apps.owned(principal, appId);
    const row = isId(endpointId, 'whe') ? await this.repository.find(appId, endpointId) : null;
    if (!row) throw notFound(appId, endpointId);
    return row;
  }
}

function notFound(appId: string, endpointId: string): ProblemError {
  return new ProblemError('not_found', `No webhook endpoint ${endpointId} for app ${appId}`);
}

function toDto(row: EndpointRecord, secret?: string): WebhookEndpointDto {
  return {
    id: row.id,
    app_id: row.app_id,
    primary: row.is_primary,
    url: row.target_url,
    description: row.description,
    event_types: row.event_types,
    timeout_seconds: row.timeout_ms / 1000,
    enabled: row.disabled_at === null,
    disabled_at: row.disabled_at?.toISOString() ?? null,
    disabled_reason: row.disabled_reason,
    failing_since: row.failing_since?.toISOString() ?? null,
    secret_rotated_at: row.secret_rotated_at.toISOString(),
    previous_secret_expires_at: row.previous_secret_expires_at?.toISOString() ?? null,
    secret_rotation_due: rotationDue(row),
    ...(secret ? { secret } : {}),
    last_ping: row.last_ping,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
