import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Tx } from '../../infra/database/sql-repository';
import { SecretBox } from '../../common/crypto/secret-box';
import { newId } from '../../common/ids';
import { ProblemError } from '../../common/errors/problem-error';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import type { AppWebhookSetup } from '../providers/app-webhook-setup';
import { AppsService } from '../providers/apps.service';
import { PlatformPrincipal } from '../providers/auth/platform-principal';
import { PutWebhookProfileDto, WebhookProfileDto } from './dto/webhook.dto';
import { EndpointRecord, WebhookEndpointsRepository } from './webhook-endpoints.repository';
import { newWebhookSecret, SigningSecrets } from './webhook-signature';

export type { SigningSecrets } from './webhook-signature';
export type { EndpointRecord } from './webhook-endpoints.repository';

/** Recommended rotation interval (spec, Authentication point 6). */
export const SECRET_ROTATION_DAYS = 90;

/** Default delivery timeout (spec: 5 s, configurable up to 30 s). */
export const DEFAULT_TIMEOUT_MS = 5000;

/** The most endpoints an app may have, its primary one included (Stripe's limit). */
export const MAX_ENDPOINTS_PER_APP = 16;

/** The profile as answered: `webhook_secret` is the spec's name of the secret, `secret` its older alias. */
export type WebhookProfileAnswer = WebhookProfileDto & { webhook_secret?: string };

/**
 * The spec's webhook profile: the app's primary endpoint (`is_primary`),
 * whose URL is the app's `webhook_url`. Subscriptions, timeout, signing
 * secret (sealed at rest) and the enabled state, presented exactly as before
 * endpoints existed. Also the signing secrets every endpoint signs with.
 */
@Injectable()
export class WebhookProfiles implements OnModuleInit, AppWebhookSetup {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly repository: WebhookEndpointsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly apps: AppsService,
    private readonly secretBox: SecretBox,
  ) {}

  /** Setting an app's webhook_url (registration, PATCH) creates its profile: see AppWebhookSetup. */
  onModuleInit(): void {
    this.apps.useWebhookSetup(this);
  }

  async ensureProfile(manager: Tx, appId: string): Promise<string | null> {
    const secret = newWebhookSecret();
    const inserted = await this.insertPrimary(manager, appId, { sealedSecret: this.secretBox.seal(secret), eventTypes: ['*'] });
    return inserted ? secret : null;
  }

  async get(principal: PlatformPrincipal, appId: string): Promise<WebhookProfileAnswer> {
    await this.apps.owned(principal, appId);
    const profile = await this.find(appId);
    if (!profile) throw new ProblemError('not_found', `App ${appId} has no webhook profile yet; create one with PUT`);
    return this.toDto(profile);
  }

  /** Creates or replaces the profile. The secret is generated on creation and shown in that response only. */
  async put(
    principal: PlatformPrincipal,
    appId: string,
    input: PutWebhookProfileDto,
  ): Promise<{ created: boolean; profile: WebhookProfileAnswer }> {
    let app = await this.apps.owned(principal, appId);
    // The target lives on the app (also set by PATCH /v1/providers/runtime/apps/:id): one source of truth.
    // Setting it on an app without a profile creates the profile there; this call then only applies the rest.
    let createdSecret: string | undefined;
    if (input.url !== undefined) createdSecret = (await this.apps.update(principal, appId, { webhook_url: input.url })).webhook_secret;
    app = await this.apps.owned(principal, appId);
    if (!app.webhook_url) throw new ProblemError('missing_field', 'url is required: the app has no webhook_url yet', { field: 'url' });

    const eventTypes = normaliseTypes(input.event_types);
    const timeoutMs = input.timeout_seconds ? input.timeout_seconds * 1000 : null;
    const secret = newWebhookSecret();
    const { row, inserted } = await this.dataSource.transaction(async (manager) => {
      // A concurrent PUT may create the profile first: insertPrimary then declines, and this one updates it.
      const created =
        !(await this.repository.findPrimary(appId, manager)) &&
        (await this.insertPrimary(manager, appId, {
          sealedSecret: this.secretBox.seal(secret),
          eventTypes: eventTypes ?? ['*'],
          timeoutMs: timeoutMs ?? DEFAULT_TIMEOUT_MS,
          enabled: input.enabled !== false,
        }));
      const primary = (await this.repository.findPrimary(appId, manager))!;
      if (created) return { row: primary, inserted: true };
      const changes = { url: null, description: null, eventTypes, timeoutMs, enabled: input.enabled ?? null };
      return { row: (await this.repository.update(appId, primary.id, changes, manager))!, inserted: false };
    });
    const created = inserted || createdSecret !== undefined;
    return { created, profile: this.toDto(row, createdSecret ?? (inserted ? secret : undefined)) };
  }

  /** New secret (shown once); the previous one keeps signing, in a second header, for the grace period. */
  async rotate(principal: PlatformPrincipal, appId: string): Promise<WebhookProfileAnswer> {
    await this.apps.owned(principal, appId);
    const primary = await this.find(appId);
    if (!primary) throw new ProblemError('not_found', `App ${appId} has no webhook profile yet; create one with PUT`);
    const secret = newWebhookSecret();
    const row = await this.repository.rotateSecret(appId, primary.id, this.secretBox.seal(secret), this.config.webhooks.secretGraceSeconds);
    return this.toDto(row!, secret);
  }

  /** The app's primary endpoint (the spec's profile), or null. */
  async find(appId: string, manager?: Tx): Promise<EndpointRecord | null> {
    return this.repository.findPrimary(appId, manager);
  }

  /** Secrets to sign with now: the current one, and the previous one while its grace period lasts. */
  signingSecrets(
    endpoint: Pick<EndpointRecord, 'secret_encrypted' | 'previous_secret_encrypted' | 'previous_secret_expires_at'>,
    now = new Date(),
  ): SigningSecrets {
    const previousValid =
      endpoint.previous_secret_encrypted && endpoint.previous_secret_expires_at && endpoint.previous_secret_expires_at > now;
    return {
      current: this.secretBox.open(endpoint.secret_encrypted),
      previous: previousValid ? this.secretBox.open(endpoint.previous_secret_encrypted!) : null,
    };
  }

  /** The current secret of the primary endpoint, for checking inbound signatures; null without a profile. */
  async currentSecret(appId: string): Promise<string | null> {
    const profile = await this.find(appId);
    return profile ? this.secretBox.open(profile.secret_encrypted) : null;
  }

  /**
   * The primary endpoint, unless the app has one already (false). Counted
   * against the app's endpoint limit under the same lock as other creations.
   */
  private async insertPrimary(
    manager: Tx,
    appId: string,
    input: { sealedSecret: string; eventTypes: string[]; timeoutMs?: number; enabled?: boolean },
  ): Promise<boolean> {
    const count = await this.repository.countLocked(manager, appId);
    if (await this.repository.hasPrimary(manager, appId)) return false;
    if (count >= MAX_ENDPOINTS_PER_APP) throw endpointLimit(appId);
    await this.repository.insert(manager, {
      id: newId('whe'),
      appId,
      primary: true,
      url: null,
      description: '',
      eventTypes: input.eventTypes,
      sealedSecret: input.sealedSecret,
      timeoutMs: input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      enabled: input.enabled ?? true,
    });
    return true;
  }

  private toDto(row: EndpointRecord, secret?: string): WebhookProfileAnswer {
    return {
      app_id: row.app_id,
      url: row.target_url,
      event_types: row.event_types,
      timeout_seconds: row.timeout_ms / 1000,
      enabled: row.disabled_at === null,
      disabled_at: row.disabled_at?.toISOString() ?? null,
      disabled_reason: row.disabled_reason,
      secret_rotated_at: row.secret_rotated_at.toISOString(),
      previous_secret_expires_at: row.previous_secret_expires_at?.toISOString() ?? null,
      secret_rotation_due: rotationDue(row),
      ...(secret ? { webhook_secret: secret, secret } : {}),
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }
}

export function rotationDue(row: Pick<EndpointRecord, 'secret_rotated_at'>): boolean {
  return Date.now() - row.secret_rotated_at.getTime() > SECRET_ROTATION_DAYS * 86_400_000;
}

export function endpointLimit(appId: string): ProblemError {
  return new ProblemError('conflict', `App ${appId} has ${MAX_ENDPOINTS_PER_APP} webhook endpoints, the most an app may have`, {
    limit: MAX_ENDPOINTS_PER_APP,
  });
}

/** Subscribed types as stored: `["*"]` for all, else the named types sorted and deduplicated; null when not given. */
export function normaliseTypes(types: string[] | undefined): string[] | null {
  if (types === undefined) return null;
  if (types.length === 0)
    throw new ProblemError('missing_field', 'event_types must name at least one type, or "*"', { field: 'event_types' });
  return types.includes('*') ? ['*'] : [...new Set(types)].sort();
}
