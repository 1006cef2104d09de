import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';

/** A `webhook_profiles` row, as the profile service and the drain use it. */
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

/** Which event types an app's endpoint takes, and whether it is disabled (fan-out). */
export interface ProfileSubscription {
  app_id: string;
  event_types: string[];
  disabled: boolean;
}

/** What a drain needs of an endpoint: its profile, the app's webhook_url and the developer's address for mail. */
export type EndpointRow = Pick<
  ProfileRow,
  | 'app_id'
  | 'secret_encrypted'
  | 'previous_secret_encrypted'
  | 'previous_secret_expires_at'
  | 'timeout_ms'
  | 'failing_since'
  | 'disabled_at'
> & {
  webhook_url: string | null;
  developer_email: string;
};

/** What `put` asks of a profile: null leaves a field as it is (or, on creation, takes its default). */
export interface ProfileChanges {
  eventTypes: string[] | null;
  sealedSecret: string;
  timeoutMs: number | null;
  enabled: boolean | null;
}

/** The only reader and writer of `webhook_profiles` (reads of `apps` and `developers` join here for the drain). */
@Injectable()
export class WebhookProfilesRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  async find(appId: string, tx?: Tx): Promise<ProfileRow | null> {
    return this.first<ProfileRow>(`SELECT * FROM webhook_profiles WHERE app_id = $1`, [appId], tx);
  }

  /** A profile with every event type and the given secret and timeout; false when the app already has one. */
  async insertDefault(tx: Tx, appId: string, sealedSecret: string, timeoutMs: number): Promise<boolean> {
    const inserted = await this.rows<{ app_id: string }>(
      `INSERT INTO webhook_profiles (app_id, event_types, secret_encrypted, timeout_ms) VALUES ($1, '{*}'::text[], $2, $3)
       ON CONFLICT (app_id) DO NOTHING RETURNING app_id`,
      [appId, sealedSecret, timeoutMs],
      tx,
    );
    return inserted.length > 0;
  }

  /**
   * Creates the profile (with `sealedSecret`) or applies the changes to the existing one (its secret is kept).
   * `inserted` says which: PostgreSQL's `xmax = 0` holds for a row this statement inserted.
   */
  async upsert(appId: string, changes: ProfileChanges, defaultTimeoutMs: number): Promise<ProfileRow & { inserted: boolean }> {
    const row = await this.first<ProfileRow & { inserted: boolean }>(
      `INSERT INTO webhook_profiles (app_id, event_types, secret_encrypted, timeout_ms)
       VALUES ($1, COALESCE($2, '{*}'::text[]), $3, COALESCE($4, ${Number(defaultTimeoutMs)}))
       ON CONFLICT (app_id) DO UPDATE SET
         event_types = COALESCE($2, webhook_profiles.event_types),
         timeout_ms = COALESCE($4, webhook_profiles.timeout_ms),
         disabled_at = CASE WHEN $5::boolean IS TRUE THEN NULL WHEN $5::boolean IS FALSE THEN COALESCE(webhook_profiles.disabled_at, now()) ELSE webhook_profiles.disabled_at END,
         disabled_reason = CASE WHEN $5::boolean IS TRUE THEN NULL WHEN $5::boolean IS FALSE THEN COALESCE(webhook_profiles.disabled_reason, 'disabled by the provider') ELSE webhook_profiles.disabled_reason END,
         failing_since = CASE WHEN $5::boolean IS TRUE THEN NULL ELSE webhook_profiles.failing_since END,
         updated_at = now()
       RETURNING *, (xmax = 0) AS inserted`,
      [appId, changes.eventTypes, changes.sealedSecret, changes.timeoutMs, changes.enabled],
    );
    return row!;
  }

  /** Disabled by its provider (a profile created with `enabled: false`). */
  async disableByProvider(appId: string): Promise<void> {
    await this.execute(`UPDATE webhook_profiles SET disabled_at = now(), disabled_reason = 'disabled by the provider' WHERE app_id = $1`, [
      appId,
    ]);
  }

  /**
   * A new current secret; the old one stays as the previous secret for `graceSeconds` (none when 0).
   * Null when the app has no profile.
   */
  async rotateSecret(appId: string, sealedSecret: string, graceSeconds: number): Promise<ProfileRow | null> {
    const { rows } = await this.changed<ProfileRow>(
      `UPDATE webhook_profiles SET
         previous_secret_encrypted = CASE WHEN $3 > 0 THEN secret_encrypted END,
         previous_secret_expires_at = CASE WHEN $3 > 0 THEN now() + make_interval(secs => $3) END,
         secret_encrypted = $2, secret_rotated_at = now(), rotation_reminded_at = NULL, updated_at = now()
       WHERE app_id = $1 RETURNING *`,
      [appId, sealedSecret, graceSeconds],
    );
    return rows[0] ?? null;
  }

  /** The subscriptions of every app of a fan-out batch, in the dispatching transaction. */
  async subscriptionsOf(tx: Tx, appIds: string[]): Promise<ProfileSubscription[]> {
    return this.rows<ProfileSubscription>(
      `SELECT app_id, event_types, disabled_at IS NOT NULL AS disabled FROM webhook_profiles WHERE app_id = ANY($1)`,
      [appIds],
      tx,
    );
  }

  /** The endpoint of a drain round: profile, target URL and developer address in one read. */
  async endpoint(appId: string): Promise<EndpointRow | null> {
    return this.first<EndpointRow>(
      `SELECT p.app_id, p.secret_encrypted, p.previous_secret_encrypted, p.previous_secret_expires_at, p.timeout_ms,
              p.failing_since, p.disabled_at, a.webhook_url, d.email AS developer_email
         FROM webhook_profiles p JOIN apps a ON a.id = p.app_id JOIN developers d ON d.id = a.developer_id
        WHERE p.app_id = $1`,
      [appId],
    );
  }

  /** A delivery succeeded: the endpoint's failure streak ends. */
  async clearFailing(appId: string): Promise<void> {
    await this.execute(`UPDATE webhook_profiles SET failing_since = NULL WHERE app_id = $1`, [appId]);
  }

  /**
   * A batch of failures: starts the failure streak if none runs, and disables the endpoint when `gone` (410) or
   * when the streak has lasted `disableAfterSeconds`. True when this statement disabled it (with `reason`).
   */
  async recordFailure(tx: Tx, appId: string, gone: boolean, disableAfterSeconds: number, reason: string): Promise<boolean> {
    const { rows } = await this.changed<{ disabled: boolean }>(
      `UPDATE webhook_profiles SET
         failing_since = COALESCE(failing_since, now()),
         disabled_at = CASE WHEN disabled_at IS NULL AND ($2 OR COALESCE(failing_since, now()) <= now() - make_interval(secs => $3)) THEN now() ELSE disabled_at END,
         disabled_reason = CASE WHEN disabled_at IS NULL AND ($2 OR COALESCE(failing_since, now()) <= now() - make_interval(secs => $3)) THEN $4 ELSE disabled_reason END
       WHERE app_id = $1
       RETURNING (disabled_at IS NOT NULL AND disabled_reason = $4 AND disabled_at >= now()) AS disabled`,
      [appId, gone, disableAfterSeconds, reason],
      tx,
    );
    return rows[0]?.disabled === true;
  }

  /** Apps whose signing secret is older than `days` and whose developer was not reminded yet (at most 100 per sweep). */
  async dueForRotationReminder(days: number): Promise<string[]> {
    const due = await this.rows<{ app_id: string }>(
      `SELECT app_id FROM webhook_profiles
        WHERE secret_rotated_at < now() - make_interval(days => $1) AND rotation_reminded_at IS NULL LIMIT 100`,
      [days],
    );
    return due.map((row) => row.app_id);
  }

  /** Notes the reminder; false when another sweep noted it first (so exactly one mail goes out). */
  async markRotationReminded(tx: Tx, appId: string): Promise<boolean> {
    const { count } = await this.changed(
      `UPDATE webhook_profiles SET rotation_reminded_at = now() WHERE app_id = $1 AND rotation_reminded_at IS NULL`,
      [appId],
      tx,
    );
    return count > 0;
  }
}
