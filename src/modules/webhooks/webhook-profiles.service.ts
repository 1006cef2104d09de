import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import type { Tx } from '../../infra/database/sql-repository';
import { SecretBox } from '../../common/crypto/secret-box';
import { ProblemError } from '../../common/errors/problem-error';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import type { AppWebhookSetup } from '../providers/app-webhook-setup';
import { AppsService } from '../providers/apps.service';
import { PlatformPrincipal } from '../providers/auth/platform-principal';
import { PutWebhookProfileDto, WebhookProfileDto } from './dto/webhook.dto';
import { ProfileRow, WebhookProfilesRepository } from './webhook-profiles.repository';
import { newWebhookSecret, SigningSecrets } from './webhook-signature';

export type { SigningSecrets } from './webhook-signature';
export type { ProfileRow } from './webhook-profiles.repository';

/** Recommended rotation interval (spec, Authentication point 6). */
export const SECRET_ROTATION_DAYS = 90;

/** The profile as answered: `webhook_secret` is the spec's name of the secret, `secret` its older alias. */
export type WebhookProfileAnswer = WebhookProfileDto & { webhook_secret?: string };

/** Default delivery timeout (spec: 5 s, configurable up to 30 s). */
const DEFAULT_TIMEOUT_MS = 5000;

/** Webhook profiles: subscriptions, timeout, signing secret (sealed at rest) and the enabled state. */
@Injectable()
export class WebhookProfiles implements OnModuleInit, AppWebhookSetup {
  constructor(
    private readonly repository: WebhookProfilesRepository,
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
    const inserted = await this.repository.insertDefault(manager, appId, this.secretBox.seal(secret), DEFAULT_TIMEOUT_MS);
    return inserted ? secret : null;
  }

  async get(principal: PlatformPrincipal, appId: string): Promise<WebhookProfileAnswer> {
    const app = await this.apps.owned(principal, appId);
    const profile = await this.find(appId);
    if (!profile) throw new ProblemError('not_found', `App ${appId} has no webhook profile yet; create one with PUT`);
    return this.toDto(profile, app.webhook_url);
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

    const secret = newWebhookSecret();
    const eventTypes = normaliseTypes(input.event_types);
    const row = await this.repository.upsert(
      appId,
      {
        eventTypes,
        sealedSecret: this.secretBox.seal(secret),
        timeoutMs: input.timeout_seconds ? input.timeout_seconds * 1000 : null,
        enabled: input.enabled ?? null,
      },
      DEFAULT_TIMEOUT_MS,
    );
    const created = row.inserted || createdSecret !== undefined;
    if (created && input.enabled === false) {
      await this.repository.disableByProvider(appId);
      row.disabled_at = new Date();
      row.disabled_reason = 'disabled by the provider';
    }
    return { created, profile: this.toDto(row, app.webhook_url, createdSecret ?? (row.inserted ? secret : undefined)) };
  }

  /** New secret (shown once); the previous one keeps signing, in a second header, for the grace period. */
  async rotate(principal: PlatformPrincipal, appId: string): Promise<WebhookProfileAnswer> {
    const app = await this.apps.owned(principal, appId);
    const secret = newWebhookSecret();
    const row = await this.repository.rotateSecret(appId, this.secretBox.seal(secret), this.config.webhooks.secretGraceSeconds);
    if (!row) throw new ProblemError('not_found', `App ${appId} has no webhook profile yet; create one with PUT`);
    return this.toDto(row, app.webhook_url, secret);
  }

  async find(appId: string, manager?: Tx): Promise<ProfileRow | null> {
    return this.repository.find(appId, manager);
  }

  /** Secrets to sign with now: the current one, and the previous one while its grace period lasts. */
  signingSecrets(
    profile: Pick<ProfileRow, 'secret_encrypted' | 'previous_secret_encrypted' | 'previous_secret_expires_at'>,
    now = new Date(),
  ): SigningSecrets {
    const previousValid =
      profile.previous_secret_encrypted && profile.previous_secret_expires_at && profile.previous_secret_expires_at > now;
    return {
      current: this.secretBox.open(profile.secret_encrypted),
      previous: previousValid ? this.secretBox.open(profile.previous_secret_encrypted!) : null,
    };
  }

  /** The current secret, for checking inbound signatures; null without a profile. */
  async currentSecret(appId: string): Promise<string | null> {
    const profile = await this.find(appId);
    return profile ? this.secretBox.open(profile.secret_encrypted) : null;
  }

  subscribes(profile: ProfileRow, type: string): boolean {
    return profile.event_types.includes('*') || profile.event_types.includes(type);
  }

  private toDto(row: ProfileRow, url: string | null, secret?: string): WebhookProfileAnswer {
    return {
      app_id: row.app_id,
      url,
      event_types: row.event_types,
      timeout_seconds: row.timeout_ms / 1000,
      enabled: row.disabled_at === null,
      disabled_at: row.disabled_at?.toISOString() ?? null,
      disabled_reason: row.disabled_reason,
      secret_rotated_at: row.secret_rotated_at.toISOString(),
      previous_secret_expires_at: row.previous_secret_expires_at?.toISOString() ?? null,
      secret_rotation_due: Date.now() - row.secret_rotated_at.getTime() > SECRET_ROTATION_DAYS * 86_400_000,
      ...(secret ? { webhook_secret: secret, secret } : {}),
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }
}

function normaliseTypes(types: string[] | undefined): string[] | null {
  if (types === undefined) return null;
  if (types.length === 0)
    throw new ProblemError('missing_field', 'event_types must name at least one type, or "*"', { field: 'event_types' });
  return types.includes('*') ? ['*'] : [...new Set(types)].sort();
}
