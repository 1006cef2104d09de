import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { OutboundHttp } from '../../common/http/outbound-http';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { MailOutbox } from '../../infra/mail/mail-outbox';
import { BackboneMetrics } from '../../infra/metrics/backbone-metrics';
import { MAX_CHAIN_MS, MAX_RETRIES, retryDelayMs, verdictFor } from './delivery-policy';
import { DeliveryRow } from './webhook-deliveries.service';
import { ProfileRow, WebhookProfiles } from './webhook-profiles.service';
import { sendWebhook, SendResult } from './webhook-sender';
import { redactHeaders, signatureHeaders, SigningSecrets } from './webhook-signature';

export const USER_AGENT = 'Service-Webhooks/1.0';

/** Longest delivery timeout (30 s) plus a margin: how long a claimed attempt stays out of other claims. */
export const CLAIM_LEASE_MS = 35_000;

/** A claimed attempt: the delivery after its attempt number was taken. */
export type ClaimedDelivery = Pick<DeliveryRow, 'id' | 'event_id' | 'event_type' | 'body' | 'attempt_count' | 'chain_started_at'>;

/** What a drain needs of its endpoint, read once per round. */
export interface Endpoint {
  appId: string;
  url: URL;
  timeoutMs: number;
  failingSince: Date | null;
  developerEmail: string;
  secrets: SigningSecrets;
}

/** One attempt's outcome, waiting to be written with the others of its round. */
export interface AttemptRecord {
  deliveryId: string;
  outcome: 'delivered' | 'retry' | 'failed';
  code: number | null;
  error: string | null;
  nextAt: Date | null;
  logged: {
    attempt: number;
    startedAt: Date;
    headers: Record<string, string>;
    latencyMs: number;
    body: string | null;
    errorClass: string | null;
  };
  /** A 410 Gone: the endpoint is disabled at once. */
  gone: boolean;
}

type EndpointRow = Pick<
  ProfileRow,
  'app_id' | 'secret_encrypted' | 'previous_secret_encrypted' | 'timeout_ms' | 'failing_since' | 'disabled_at'
> & {
  previous_secret_expires_at: Date | null;
  webhook_url: string | null;
  developer_email: string;
};

/**
 * The statements and the single HTTP attempt behind an endpoint drain
 * (EndpointDrain), set-based: one statement claims a batch of due
 * deliveries, one writes a batch of outcomes (attempt log lines and the
 * deliveries' new states). Claiming takes the next attempt number and moves
 * `next_attempt_at` a lease ahead, so a second drainer never sends the same
 * attempt and a drainer that dies leaves its claims due again after the lease.
 */
@Injectable()
export class DeliveryAttempts {
  private readonly logger = new Logger(DeliveryAttempts.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly profiles: WebhookProfiles,
    private readonly mail: MailOutbox,
    private readonly http: OutboundHttp,
    private readonly metrics: BackboneMetrics,
  ) {}

  /** The app of a delivery (for `deliver` jobs queued before drains replaced them). */
  async appOf(deliveryId: string): Promise<string | null> {
    const [row]: Array<{ app_id: string }> = await this.dataSource.query(`SELECT app_id FROM webhook_deliveries WHERE id = $1`, [
      deliveryId,
    ]);
    return row?.app_id ?? null;
  }

  /**
   * The endpoint to send to, or why there is none (`no_webhook_profile`,
   * `endpoint_disabled`, `blocked_target` for a URL the target policy refuses
   * as written). Host names are resolved at connect time, where a name that
   * does not resolve is a retryable `dns_error` and one that resolves inside
   * is `blocked_target`.
   */
  async endpoint(appId: string): Promise<Endpoint | { unusable: string }> {
    const [row]: EndpointRow[] = await this.dataSource.query(
      `SELECT p.app_id, p.secret_encrypted, p.previous_secret_encrypted, p.previous_secret_expires_at, p.timeout_ms,
              p.failing_since, p.disabled_at, a.webhook_url, d.email AS developer_email
         FROM webhook_profiles p JOIN apps a ON a.id = p.app_id JOIN developers d ON d.id = a.developer_id
        WHERE p.app_id = $1`,
      [appId],
    );
    if (!row || !row.webhook_url) return { unusable: 'no_webhook_profile' };
    if (row.disabled_at) return { unusable: 'endpoint_disabled' };
    let url: URL;
    try {
      url = await this.http.assertCallable(row.webhook_url, 'webhook_url', { resolve: false });
    } catch {
      return { unusable: 'blocked_target' };
    }
    return {
      appId,
      url,
      timeoutMs: row.timeout_ms,
      failingSince: row.failing_since,
      developerEmail: row.developer_email,
      secrets: this.profiles.signingSecrets(row),
    };
  }

  /**
   * Claims up to `limit` due deliveries of the endpoint, oldest due first:
   * takes their next attempt number and leases them for CLAIM_LEASE_MS.
   * Rows another drainer is claiming right now are skipped, not waited for.
   */
  async claim(appId: string, limit: number): Promise<ClaimedDelivery[]> {
    return this.dataSource.query(
      `WITH due AS (
         SELECT id FROM webhook_deliveries
          WHERE app_id = $1 AND status = 'pending' AND next_attempt_at <= now() + interval '50 milliseconds'
          ORDER BY next_attempt_at, id
          LIMIT $2
          FOR UPDATE SKIP LOCKED
       ), claimed AS (
         UPDATE webhook_deliveries d
            SET attempt_count = d.attempt_count + 1, next_attempt_at = now() + make_interval(secs => $3), updated_at = now()
           FROM due WHERE d.id = due.id
         RETURNING d.id, d.event_id, d.event_type, d.body, d.attempt_count, d.chain_started_at, d.next_attempt_at
       )
       SELECT id, event_id, event_type, body, attempt_count, chain_started_at FROM claimed ORDER BY next_attempt_at, id`,
      [appId, limit, CLAIM_LEASE_MS / 1000],
    );
  }

  /** Ends every due delivery of an endpoint that cannot be sent to, without an attempt (nothing was sent). */
  async failDue(appId: string, reason: string): Promise<number> {
    const [{ ended }]: Array<{ ended: number }> = await this.dataSource.query(
      `WITH ended AS (
         UPDATE webhook_deliveries SET status = 'failed', last_error = $2, failed_at = now(), updated_at = now()
          WHERE app_id = $1 AND status = 'pending' AND next_attempt_at <= now() + interval '50 milliseconds'
          RETURNING id
       )
       SELECT count(*)::int AS ended FROM ended`,
      [appId, reason],
    );
    return ended;
  }

  /** Signs and sends one claimed attempt; the outcome is returned for `record`, not written. */
  async send(endpoint: Endpoint, delivery: ClaimedDelivery): Promise<AttemptRecord> {
    const attempt = delivery.attempt_count;
    const startedAt = new Date();
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    const headers: Record<string, string> = {
      'User-Agent': USER_AGENT,
      'X-Service-Event-Id': delivery.event_id,
      'X-Service-Event-Type': delivery.event_type,
      'X-Service-Delivery-Id': delivery.id,
      'X-Service-Delivery-Attempt': String(attempt),
      'X-Service-Timestamp': String(timestamp),
      ...signatureHeaders(endpoint.secrets, delivery.event_id, timestamp, delivery.body),
    };
    const result: SendResult = await sendWebhook(endpoint.url, headers, delivery.body, endpoint.timeoutMs, this.http);
    const verdict = result.errorClass === 'blocked_target' ? ({ outcome: 'failed' } as const) : verdictFor(result.status, result.headers);
    let outcome: AttemptRecord['outcome'] = verdict.outcome;
    let nextAt: Date | null = null;
    if (verdict.outcome === 'retry') {
      nextAt = new Date(Date.now() + retryDelayMs(attempt, this.config.webhooks.retryBaseMs, verdict.retryAfterMs));
      const exhausted = attempt > MAX_RETRIES;
      if (exhausted || nextAt.getTime() - new Date(delivery.chain_started_at).getTime() > MAX_CHAIN_MS) outcome = 'failed';
    }
    this.metrics.webhookDelivery(outcome, result.latencyMs);
    const httpError = result.status !== null && outcome !== 'delivered' ? `http_${result.status}` : null;
    return {
      deliveryId: delivery.id,
      outcome,
      code: result.status,
      error: result.errorClass ?? httpError,
      nextAt: outcome === 'retry' ? nextAt : null,
      logged: {
        attempt,
        startedAt,
        headers: redactHeaders(headers),
        latencyMs: result.latencyMs,
        body: result.body,
        errorClass: result.errorClass ?? httpError,
      },
      gone: 'disable' in verdict && verdict.disable === true,
    };
  }

  /**
   * Writes a batch of outcomes in one statement: the attempt log lines and
   * each delivery's new state. A delivery that is no longer pending (its
   * endpoint's log was purged, an operator ended it) is left as it is.
   */
  async record(records: AttemptRecord[]): Promise<void> {
    if (records.length === 0) return;
    const column = <T>(pick: (r: AttemptRecord) => T) => records.map(pick);
    await this.dataSource.query(
      `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::timestamptz[], $6::int[], $7::timestamptz[],
                              $8::jsonb[], $9::int[], $10::text[], $11::text[])
                    AS t(id, outcome, code, error, next_at, attempt, started_at, headers, latency_ms, body, error_class)
       ), logged AS (
         INSERT INTO webhook_attempts (delivery_id, attempt, started_at, request_headers, status_code, latency_ms, response_body, error_class, outcome)
         SELECT id, attempt, started_at, headers, code, latency_ms, body, error_class, outcome FROM input
         ON CONFLICT DO NOTHING
       )
       UPDATE webhook_deliveries d SET
         status = CASE WHEN i.outcome = 'retry' THEN 'pending' ELSE i.outcome END,
         next_attempt_at = COALESCE(i.next_at, d.next_attempt_at),
         last_status_code = CASE WHEN i.outcome = 'retry' THEN i.code ELSE COALESCE(i.code, d.last_status_code) END,
         last_error = i.error,
         delivered_at = CASE WHEN i.outcome = 'delivered' THEN now() END,
         failed_at = CASE WHEN i.outcome = 'failed' THEN now() END,
         updated_at = now()
        FROM input i
       WHERE d.id = i.id AND d.status = 'pending'`,
      [
        column((r) => r.deliveryId),
        column((r) => r.outcome),
        column((r) => r.code),
        column((r) => r.error),
        column((r) => r.nextAt),
        column((r) => r.logged.attempt),
        column((r) => r.logged.startedAt),
        column((r) => JSON.stringify(r.logged.headers)),
        column((r) => r.logged.latencyMs),
        column((r) => r.logged.body),
        column((r) => r.logged.errorClass),
      ],
    );
  }

  /**
   * An endpoint's health after a batch of outcomes. A success clears the
   * failure streak. A 410 Gone disables the endpoint at once (Standard
   * Webhooks); otherwise an endpoint failing every attempt for
   * `disableAfterSeconds` is disabled. Either way the developer gets a mail.
   */
  async trackHealth(endpoint: Endpoint, records: AttemptRecord[]): Promise<void> {
    const ok = records.some((r) => r.outcome === 'delivered');
    if (ok) {
      if (endpoint.failingSince) {
        await this.dataSource.query(`UPDATE webhook_profiles SET failing_since = NULL WHERE app_id = $1`, [endpoint.appId]);
        endpoint.failingSince = null;
      }
      return;
    }
    if (records.length === 0) return;
    const gone = records.some((r) => r.gone);
    const appId = endpoint.appId;
    endpoint.failingSince ??= new Date();
    await this.dataSource.transaction(async (manager) => {
      const reason = gone ? 'endpoint answered 410 Gone' : `every delivery failed for ${this.config.webhooks.disableAfterSeconds} s`;
      const [[row]]: [Array<{ disabled: boolean }>, number] = await manager.query(
        `UPDATE webhook_profiles SET
           failing_since = COALESCE(failing_since, now()),
           disabled_at = CASE WHEN disabled_at IS NULL AND ($2 OR COALESCE(failing_since, now()) <= now() - make_interval(secs => $3)) THEN now() ELSE disabled_at END,
           disabled_reason = CASE WHEN disabled_at IS NULL AND ($2 OR COALESCE(failing_since, now()) <= now() - make_interval(secs => $3)) THEN $4 ELSE disabled_reason END
         WHERE app_id = $1
         RETURNING (disabled_at IS NOT NULL AND disabled_reason = $4 AND disabled_at >= now()) AS disabled`,
        [appId, gone, this.config.webhooks.disableAfterSeconds, reason],
      );
      if (!row?.disabled) return;
      this.logger.warn({ appId, reason }, 'webhook endpoint disabled');
      await this.mail.enqueue(manager, {
        to: endpoint.developerEmail,
        subject: 'Webhook endpoint disabled',
        text: `Webhook deliveries for app ${appId} are paused: ${reason}.\nFix the endpoint, re-enable it with PUT /v1/providers/apps/${appId}/webhook {"enabled": true}, then re-send missed events with POST /v1/providers/apps/${appId}/webhook/recover.`,
      });
    });
  }

  /** When the endpoint's next pending delivery is due (a retry, or a claim whose drainer died); null when none is pending. */
  async nextDue(appId: string): Promise<Date | null> {
    const [row]: Array<{ at: Date | null }> = await this.dataSource.query(
      `SELECT min(next_attempt_at) AS at FROM webhook_deliveries WHERE app_id = $1 AND status = 'pending'`,
      [appId],
    );
    return row?.at ?? null;
  }
}
