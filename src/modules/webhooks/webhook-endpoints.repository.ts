import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';

/** The result of an endpoint check (a signed `ping`), kept on the endpoint for the console. */
export interface PingResult {
  at: string;
  /** The ping as it appears in the endpoint's delivery log. */
  delivery_id: string;
  status_code: number | null;
  /** The signed ping was answered 2xx. */
  ok: boolean;
  latency_ms: number;
  error: string | null;
  /**
   * `verified`: the receiver answered the signed ping 2xx and refused one with a wrong signature;
   * `not_verified`: it accepted both; `unknown`: the signed ping already failed, so nothing can be told.
   */
  signature_check: 'verified' | 'not_verified' | 'unknown';
}

/** A `webhook_endpoints` row, with the URL it delivers to (a primary row's URL is the app's `webhook_url`). */
export interface EndpointRecord {
  id: string;
  app_id: string;
  is_primary: boolean;
  url: string | null;
  target_url: string | null;
  description: string;
  event_types: string[];
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | null;
  secret_rotated_at: Date;
  timeout_ms: number;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  last_ping: PingResult | null;
  created_at: Date;
  updated_at: Date;
}

/** Which event types an endpoint takes, and whether it is disabled (fan-out). */
export interface EndpointSubscription {
  id: string;
  app_id: string;
  event_types: string[];
  disabled: boolean;
}

/** What a drain needs of an endpoint: its row, the URL it delivers to and the developer's address for mail. */
export type DrainTargetRow = Pick<
  EndpointRecord,
  | 'id'
  | 'app_id'
  | 'is_primary'
  | 'target_url'
  | 'secret_encrypted'
  | 'previous_secret_encrypted'
  | 'previous_secret_expires_at'
  | 'timeout_ms'
  | 'failing_since'
  | 'disabled_at'
> & { developer_email: string };

/** A new endpoint (the primary one's URL is the app's, so `url` is null for it). */
export interface NewEndpoint {
  id: string;
  appId: string;
  primary: boolean;
  url: string | null;
  description: string;
  eventTypes: string[];
  sealedSecret: string;
  timeoutMs: number;
  enabled: boolean;
}

/** What an update asks: null leaves a field as it is. */
export interface EndpointChanges {
  url: string | null;
  description: string | null;
  eventTypes: string[] | null;
  timeoutMs: number | null;
  enabled: boolean | null;
}

/** Every endpoint column, and the URL it delivers to: the primary endpoint's is the app's webhook_url. */
const SELECT_ENDPOINT = `SELECT e.*, COALESCE(e.url, a.webhook_url) AS target_url FROM webhook_endpoints e JOIN apps a ON a.id = e.app_id`;

/** Sets the enabled state from a nullable boolean `$n` (true clears disabling and the failure streak). */
const enabledSetters = (n: number) => `
  disabled_at = CASE WHEN $${n}::boolean IS TRUE THEN NULL WHEN $${n}::boolean IS FALSE THEN COALESCE(disabled_at, now()) ELSE disabled_at END,
  disabled_reason = CASE WHEN $${n}::boolean IS TRUE THEN NULL WHEN $${n}::boolean IS FALSE THEN COALESCE(disabled_reason, 'disabled by the provider') ELSE disabled_reason END,
  failing_since = CASE WHEN $${n}::boolean IS TRUE THEN NULL ELSE failing_since END`;

/**
 * The only reader and writer of `webhook_endpoints` (reads of `apps` and
 * `developers` join here for the URL of the primary endpoint and the drain's
 * mail address). The spec's webhook profile is the app's primary row.
 */
@Injectable()
export class WebhookEndpointsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  async findPrimary(appId: string, tx?: Tx): Promise<EndpointRecord | null> {
    return this.first<EndpointRecord>(`${SELECT_ENDPOINT} WHERE e.app_id = $1 AND e.is_primary`, [appId], tx);
  }

  async find(appId: string, endpointId: string, tx?: Tx): Promise<EndpointRecord | null> {
    return this.first<EndpointRecord>(`${SELECT_ENDPOINT} WHERE e.app_id = $1 AND e.id = $2`, [appId, endpointId], tx);
  }

  /** Every endpoint of the app (at most 16), primary first, then oldest first. */
  async listForApp(appId: string): Promise<EndpointRecord[]> {
    return this.rows<EndpointRecord>(`${SELECT_ENDPOINT} WHERE e.app_id = $1 ORDER BY e.is_primary DESC, e.created_at, e.id`, [appId]);
  }

  /**
   * How many endpoints the app has, counted under a transaction-scoped lock
   * on the app's endpoint set: concurrent creations for one app queue here,
   * so each sees the others' rows and the limit holds.
   */
  async countLocked(tx: Tx, appId: string): Promise<number> {
    await this.rows(`SELECT pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || $1, 0))`, [appId], tx);
    const row = await this.first<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE app_id = $1`, [appId], tx);
    return row!.n;
  }

  async hasPrimary(tx: Tx, appId: string): Promise<boolean> {
    const row = await this.first(`SELECT 1 FROM webhook_endpoints WHERE app_id = $1 AND is_primary`, [appId], tx);
    return row !== null;
  }

  async insert(tx: Tx, endpoint: NewEndpoint): Promise<void> {
    await this.rows(
      `INSERT INTO webhook_endpoints (id, app_id, is_primary, url, description, event_types, secret_encrypted, timeout_ms,
                                      disabled_at, disabled_reason)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN $9 THEN NULL ELSE now() END,
               CASE WHEN $9 THEN NULL ELSE 'disabled by the provider' END)`,
      [
        endpoint.id,
        endpoint.appId,
        endpoint.primary,
        endpoint.url,
        endpoint.description,
        endpoint.eventTypes,
        endpoint.sealedSecret,
        endpoint.timeoutMs,
        endpoint.enabled,
      ],
      tx,
    );
  }

  /** Applies the changes; the row after them, or null when the app has no such endpoint. */
  async update(appId: string, endpointId: string, changes: EndpointChanges, tx?: Tx): Promise<EndpointRecord | null> {
    const { count } = await this.changed(
      `UPDATE webhook_endpoints SET
         url = CASE WHEN is_primary THEN NULL ELSE COALESCE($3, url) END,
         description = COALESCE($4, description),
         event_types = COALESCE($5, event_types),
         timeout_ms = COALESCE($6, timeout_ms),
         ${enabledSetters(7)},
         updated_at = now()
       WHERE app_id = $1 AND id = $2`,
      [appId, endpointId, changes.url, changes.description, changes.eventTypes, changes.timeoutMs, changes.enabled],
      tx,
    );
    return count === 0 ? null : this.find(appId, endpointId, tx);
  }

  /** Deletes an endpoint that is not the primary one (its deliveries go with it); false when there is none. */
  async deleteSecondary(appId: string, endpointId: string): Promise<boolean> {
    const { count } = await this.changed(`DELETE FROM webhook_endpoints WHERE app_id = $1 AND id = $2 AND NOT is_primary`, [
      appId,
      endpointId,
    ]);
    return count > 0;
  }

  /**
   * A new current secret; the old one stays as the previous secret for `graceSeconds` (none when 0).
   * Null when the app has no such endpoint.
   */
  async rotateSecret(appId: string, endpointId: string, sealedSecret: string, graceSeconds: number): Promise<EndpointRecord | null> {
    const { count } = await this.changed(
      `UPDATE webhook_endpoints SET
         previous_secret_encrypted = CASE WHEN $4 > 0 THEN secret_encrypted END,
         previous_secret_expires_at = CASE WHEN $4 > 0 THEN now() + make_interval(secs => $4) END,
         secret_encrypted = $3, secret_rotated_at = now(), rotation_reminded_at = NULL, updated_at = now()
       WHERE app_id = $1 AND id = $2`,
      [appId, endpointId, sealedSecret, graceSeconds],
    );
    return count === 0 ? null : this.find(appId, endpointId);
  }

  async recordPing(endpointId: string, ping: PingResult): Promise<void> {
    await this.execute(`UPDATE webhook_endpoints SET last_ping = $2 WHERE id = $1`, [endpointId, JSON.stringify(ping)]);
  }

  /** The endpoints of every app of a fan-out batch, in the dispatching transaction. */
  async subscriptionsOf(tx: Tx, appIds: string[]): Promise<EndpointSubscription[]> {
    return this.prepared<EndpointSubscription>(
      'webhook_endpoints_subscriptions_of',
      `SELECT id, app_id, event_types, disabled_at IS NOT NULL AS disabled FROM webhook_endpoints WHERE app_id = ANY($1)`,
      [appIds],
      tx,
    );
  }

  /** The endpoint of a drain round: its row, target URL and developer address in one read. */
  async drainTarget(endpointId: string): Promise<DrainTargetRow | null> {
    const [row] = await this.prepared<DrainTargetRow>(
      'webhook_endpoints_drain_target',
      `SELECT e.id, e.app_id, e.is_primary, COALESCE(e.url, a.webhook_url) AS target_url, e.secret_encrypted,
              e.previous_secret_encrypted, e.previous_secret_expires_at, e.timeout_ms, e.failing_since, e.disabled_at,
              d.email AS developer_email
         FROM webhook_endpoints e JOIN apps a ON a.id = e.app_id JOIN developers d ON d.id = a.developer_id
        WHERE e.id = $1`,
      [endpointId],
    );
    return row ?? null;
  }

  /** The app's primary endpoint id (drain jobs queued before endpoints named only their app). */
  async primaryIdOf(appId: string): Promise<string | null> {
    const row = await this.first<{ id: string }>(`SELECT id FROM webhook_endpoints WHERE app_id = $1 AND is_primary`, [appId]);
    return row?.id ?? null;
  }

  /** A delivery succeeded: the endpoint's failure streak ends. */
  async clearFailing(endpointId: string): Promise<void> {
    await this.execute(`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1`, [endpointId]);
  }

  /**
   * A batch of failures: starts the failure streak if none runs, and disables the endpoint when `gone` (410) or
   * when the streak has lasted `disableAfterSeconds`. True when this statement disabled it (with `reason`).
   */
  async recordFailure(tx: Tx, endpointId: string, gone: boolean, disableAfterSeconds: number, reason: string): Promise<boolean> {
    const { rows } = await this.changed<{ disabled: boolean }>(
      `UPDATE webhook_endpoints SET
         failing_since = COALESCE(failing_since, now()),
         disabled_at = CASE WHEN disabled_at IS NULL AND ($2 OR COALESCE(failing_since, now()) <= now() - make_interval(secs => $3)) THEN now() ELSE disabled_at END,
         disabled_reason = CASE WHEN disabled_at IS NULL AND ($2 OR COALESCE(failing_since, now()) <= now() - make_interval(secs => $3)) THEN $4 ELSE disabled_reason END
       WHERE id = $1
       RETURNING (disabled_at IS NOT NULL AND disabled_reason = $4 AND disabled_at >= now()) AS disabled`,
      [endpointId, gone, disableAfterSeconds, reason],
      tx,
    );
    return rows[0]?.disabled === true;
  }

  /** Endpoints whose signing secret is older than `days` and whose developer was not reminded yet (at most 100 per sweep). */
  async dueForRotationReminder(days: number): Promise<Array<{ id: string; app_id: string; is_primary: boolean }>> {
    return this.rows(
      `SELECT id, app_id, is_primary FROM webhook_endpoints
        WHERE secret_rotated_at < now() - make_interval(days => $1) AND rotation_reminded_at IS NULL LIMIT 100`,
      [days],
    );
  }

  /** Notes the reminder; false when another sweep noted it first (so exactly one mail goes out). */
  async markRotationReminded(tx: Tx, endpointId: string): Promise<boolean> {
    const { count } = await this.changed(
      `UPDATE webhook_endpoints SET rotation_reminded_at = now() WHERE id = $1 AND rotation_reminded_at IS NULL`,
      [endpointId],
      tx,
    );
    return count > 0;
  }
}
