import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { ProblemError } from '../../common/errors/problem-error';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import type { AppWebhookSetup } from '../providers/app-webhook-setup';
import { AppsService } from '../providers/apps.service';
import { PlatformPrincipal } from '../providers/auth/platform-principal';
import { PutWebhookProfileDto, WebhookProfileDto } from './dto/webhook.dto';
import { newWebhookSecret, SigningSecrets } from './webhook-signature';

export type { SigningSecrets } from './webhook-signature';

/** Recommended rotation interval (spec, Authentication point 6). */
export const SECRET_ROTATION_DAYS = 90;

export interface ProfileRow {
  app_id: string;
  event_types: string[];
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
  secret_rotated_at: Date;
  timeout_ms: number;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The profile as answered: `webhook_secret` is the spec's name of the secret, `secret` its older alias. */
export type WebhookProfileAnswer = WebhookProfileDto & { webhook_secret?: string };

/** Default delivery timeout (spec: 5 s, configurable up to 30 s). */
const DEFAULT_TIMEOUT_MS = 5000;

/** Webhook profiles: subscriptions, timeout, signing secret (sealed at rest) and the enabled state. */
@Injectable()
export class WebhookProfiles implements OnModuleInit, AppWebhookSetup {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly apps: AppsService,
    private readonly secretBox: SecretBox,
  ) {}

  /** Setting an app's webhook_url (registration, PATCH) creates its profile: see AppWebhookSetup. */
  onModuleInit(): void {
    this.apps.useWebhookSetup(this);
  }

  async ensureProfile(manager: EntityManager, appId: string): Promise<string | null> {
    const secret = newWebhookSecret();
    const inserted: Array<{ app_id: string }> = await manager.query(
      `INSERT INTO webhook_profiles (app_id, event_types, secret_encrypted, timeout_ms) VALUES ($1, '{*}'::text[], $2, $3)
       ON CONFLICT (app_id) DO NOTHING RETURNING app_id`,
      [appId, this.secretBox.seal(secret), DEFAULT_TIMEOUT_MS],
    );
    return inserted.length > 0 ? secret : null;
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
    const [row]: Array<ProfileRow & { inserted: boolean }> = await this.dataSource.query(
      `INSERT INTO webhook_profiles (app_id, event_types, secret_encrypted, timeout_ms)
       VALUES ($1, COALESCE($2, '{*}'::text[]), $3, COALESCE($4, ${DEFAULT_TIMEOUT_MS}))
       ON CONFLICT (app_id) DO UPDATE SET
         event_types = COALESCE($2, webhook_profiles.event_types),
         timeout_ms = COALESCE($4, webhook_profiles.timeout_ms),
         disabled_at = CASE WHEN $5::boolean IS TRUE THEN NULL WHEN $5::boolean IS FALSE THEN COALESCE(webhook_profiles.disabled_at, now()) ELSE webhook_profiles.disabled_at END,
         disabled_reason = CASE WHEN $5::boolean IS TRUE THEN NULL WHEN $5::boolean IS FALSE THEN COALESCE(webhook_profiles.disabled_reason, 'disabled by the provider') ELSE webhook_profiles.disabled_reason END,
         failing_since = CASE WHEN $5::boolean IS TRUE THEN NULL ELSE webhook_profiles.failing_since END,
         updated_at = now()
       RETURNING *, (xmax = 0) AS inserted`,
      [appId, eventTypes, this.secretBox.seal(secret), input.timeout_seconds ? input.timeout_seconds * 1000 : null, input.enabled ?? null],
    );
    const created = row.inserted || createdSecret !== undefined;
    if (created && input.enabled === false) {
      await this.dataSource.query(
        `UPDATE webhook_profiles SET disabled_at = now(), disabled_reason = 'disabled by the provider' WHERE app_id = $1`,
        [appId],
      );
      row.disabled_at = new Date();
      row.disabled_reason = 'disabled by the provider';
    }
    return { created, profile: this.toDto(row, app.webhook_url, createdSecret ?? (row.inserted ? secret : undefined)) };
  }

  /** New secret (shown once); the previous one keeps signing, in a second header, for the grace period. */
  async rotate(principal: PlatformPrincipal, appId: string): Promise<WebhookProfileAnswer> {
    const app = await this.apps.owned(principal, appId);
    const secret = newWebhookSecret();
    const [[row]]: [ProfileRow[], number] = await this.dataSource.query(
      `UPDATE webhook_profiles SET
         previous_secret_encrypted = CASE WHEN $3 > 0 THEN secret_encrypted END,
         previous_secret_expires_at = CASE WHEN $3 > 0 THEN now() + make_interval(secs => $3) END,
         secret_encrypted = $2, secret_rotated_at = now(), rotation_reminded_at = NULL, updated_at = now()
       WHERE app_id = $1 RETURNING *`,
      [appId, this.secretBox.seal(secret), this.config.webhooks.secretGraceSeconds],
    );
    if (!row) throw new ProblemError('not_found', `App ${appId} has no webhook profile yet; create one with PUT`);
    return this.toDto(row, app.webhook_url, secret);
  }

  async find(appId: string, manager?: EntityManager): Promise<ProfileRow | null> {
    const [row]: ProfileRow[] = await (manager ?? this.dataSource).query(`SELECT * FROM webhook_profiles WHERE app_id = $1`, [appId]);
    return row ?? null;
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
