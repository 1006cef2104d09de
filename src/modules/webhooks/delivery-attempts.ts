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
import { redactHeaders, signatureHeaders } from './webhook-signature';

export const USER_AGENT = 'Service-Webhooks/1.0';

export type AttemptResult =
  { kind: 'skipped' } | { kind: 'not_due'; at: Date } | { kind: 'done'; status: 'delivered' | 'failed' } | { kind: 'retry'; at: Date };

/** A claimed attempt: the delivery after its attempt number was taken, with its endpoint. */
type ClaimedRow = DeliveryRow & {
  profile: Pick<
    ProfileRow,
    | 'app_id'
    | 'secret_encrypted'
    | 'previous_secret_encrypted'
    | 'previous_secret_expires_at'
    | 'timeout_ms'
    | 'failing_since'
    | 'disabled_at'
  > | null;
  webhook_url: string | null;
  developer_email: string | null;
};

/** Longest delivery timeout (30 s) plus a margin: how long an endpoint slot is held at most. */
export const SLOT_HOLD_MS = 35_000;

/**
 * One attempt of one delivery, with everything around it: claiming the
 * attempt number (two workers never send the same attempt), signing the
 * stored bytes, the response table, the retry schedule, the attempt log and
 * disabling endpoints that keep failing. The happy path is two statements:
 * the claim (which also reads the endpoint) and the outcome (the attempt log
 * and the delivery's new state).
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

  /** The app of a delivery (for jobs recorded before jobs carried it). */
  async appOf(deliveryId: string): Promise<string | null> {
    const [row]: Array<{ app_id: string }> = await this.dataSource.query(`SELECT app_id FROM webhook_deliveries WHERE id = $1`, [
      deliveryId,
    ]);
    return row?.app_id ?? null;
  }

  async attempt(deliveryId: string): Promise<AttemptResult> {
    const delivery = await this.claim(deliveryId);
    if (!delivery) return this.whyNotClaimed(deliveryId);
    const attempt = delivery.attempt_count;
    const profile = delivery.profile;
    if (!profile || profile.disabled_at || !delivery.webhook_url) {
      // Nothing was sent: give the attempt number back.
      await this.record(delivery.id, null, {
        outcome: 'failed',
        code: null,
        error: profile?.disabled_at ? 'endpoint_disabled' : 'no_webhook_profile',
        nextAt: null,
        unclaim: true,
      });
      return { kind: 'done', status: 'failed' };
    }

    const startedAt = new Date();
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    const messageId = delivery.event_id;
    const headers: Record<string, string> = {
      'User-Agent': USER_AGENT,
      'X-Service-Event-Id': messageId,
      'X-Service-Event-Type': delivery.event_type,
      'X-Service-Delivery-Id': delivery.id,
      'X-Service-Delivery-Attempt': String(attempt),
      'X-Service-Timestamp': String(timestamp),
      ...signatureHeaders(this.profiles.signingSecrets(profile as ProfileRow, startedAt), messageId, timestamp, delivery.body),
    };

    const result = await this.send(delivery.webhook_url, headers, delivery.body, profile.timeout_ms);
    const verdict = result.errorClass === 'blocked_target' ? ({ outcome: 'failed' } as const) : verdictFor(result.status, result.headers);
    const exhausted = attempt > MAX_RETRIES;
    let outcome: 'delivered' | 'retry' | 'failed' = verdict.outcome;
    let nextAt: Date | null = null;
    if (verdict.outcome === 'retry') {
      const delay = retryDelayMs(attempt, this.config.webhooks.retryBaseMs, verdict.retryAfterMs);
      nextAt = new Date(Date.now() + delay);
      if (exhausted || nextAt.getTime() - delivery.chain_started_at.getTime() > MAX_CHAIN_MS) outcome = 'failed';
    }
    this.metrics.webhookDelivery(outcome, result.latencyMs);

    const error = result.errorClass ?? (outcome === 'delivered' ? null : `http_${result.status}`);
    await this.record(
      delivery.id,
      {
        attempt,
        startedAt,
        headers: redactHeaders(headers),
        status: result.status,
        latencyMs: result.latencyMs,
        body: result.body,
        errorClass: result.errorClass ?? (result.status !== null && outcome !== 'delivered' ? `http_${result.status}` : null),
      },
      { outcome, code: result.status, error, nextAt: outcome === 'retry' ? nextAt : null },
    );
    if (outcome !== 'delivered' || profile.failing_since) {
      await this.trackHealth(
        profile.app_id,
        profile.failing_since,
        outcome === 'delivered',
        'disable' in verdict && verdict.disable === true,
        delivery.developer_email!,
      );
    }
    return outcome === 'retry' ? { kind: 'retry', at: nextAt! } : { kind: 'done', status: outcome };
  }

  /**
   * Takes the next attempt number of a pending, due delivery and reads its
   * endpoint, in one statement. A stalled job re-run by BullMQ cannot send
   * the same attempt twice: only one claim of an attempt number succeeds.
   */
  private async claim(deliveryId: string): Promise<ClaimedRow | null> {
    const [row]: ClaimedRow[] = await this.dataSource.query(
      `WITH claimed AS (
         UPDATE webhook_deliveries SET attempt_count = attempt_count + 1, updated_at = now()
          WHERE id = $1 AND status = 'pending' AND next_attempt_at <= now() + interval '50 milliseconds'
          RETURNING *
       )
       SELECT c.*, a.webhook_url, d.email AS developer_email,
              CASE WHEN p.app_id IS NULL THEN NULL ELSE json_build_object(
                'app_id', p.app_id, 'secret_encrypted', p.secret_encrypted, 'previous_secret_encrypted', p.previous_secret_encrypted,
                'previous_secret_expires_at', p.previous_secret_expires_at, 'timeout_ms', p.timeout_ms,
                'failing_since', p.failing_since, 'disabled_at', p.disabled_at) END AS profile
         FROM claimed c
         LEFT JOIN webhook_profiles p ON p.app_id = c.app_id
         LEFT JOIN apps a ON a.id = c.app_id
         LEFT JOIN developers d ON d.id = a.developer_id`,
      [deliveryId],
    );
    if (!row) return null;
    if (row.profile) {
      const p = row.profile as unknown as Record<string, string | number | null>;
      row.profile = {
        ...row.profile,
        previous_secret_expires_at: p.previous_secret_expires_at ? new Date(p.previous_secret_expires_at) : null,
        failing_since: p.failing_since ? new Date(p.failing_since) : null,
        disabled_at: p.disabled_at ? new Date(p.disabled_at) : null,
      };
    }
    return row;
  }

  private async whyNotClaimed(deliveryId: string): Promise<AttemptResult> {
    const [row]: Array<{ status: string; next_attempt_at: Date }> = await this.dataSource.query(
      `SELECT status, next_attempt_at FROM webhook_deliveries WHERE id = $1`,
      [deliveryId],
    );
    if (row?.status === 'pending') return { kind: 'not_due', at: row.next_attempt_at };
    return { kind: 'skipped' };
  }

  /** The attempt's log line (when something was sent) and the delivery's new state, in one statement. */
  private async record(
    deliveryId: string,
    logged: {
      attempt: number;
      startedAt: Date;
      headers: Record<string, string>;
      status: number | null;
      latencyMs: number;
      body: string | null;
      errorClass: string | null;
    } | null,
    next: { outcome: 'delivered' | 'retry' | 'failed'; code: number | null; error: string | null; nextAt: Date | null; unclaim?: boolean },
  ): Promise<void> {
    const log = logged
      ? `logged AS (
           INSERT INTO webhook_attempts (delivery_id, attempt, started_at, request_headers, status_code, latency_ms, response_body, error_class, outcome)
           VALUES ($1, $6, $7, $8, $3, $9, $10, $11, $2) ON CONFLICT DO NOTHING), `
      : '';
    const params: unknown[] = [deliveryId, next.outcome, next.code, next.error, next.nextAt];
    if (logged) {
      params.push(logged.attempt, logged.startedAt, JSON.stringify(logged.headers), logged.latencyMs, logged.body, logged.errorClass);
    }
    await this.dataSource.query(
      `WITH ${log}updated AS (
         UPDATE webhook_deliveries SET
           status = CASE WHEN $2::text = 'retry' THEN 'pending' ELSE $2::text END,
           attempt_count = attempt_count - ${next.unclaim ? 1 : 0},
           next_attempt_at = COALESCE($5::timestamptz, next_attempt_at),
           last_status_code = CASE WHEN $2::text = 'retry' THEN $3::int ELSE COALESCE($3::int, last_status_code) END,
           last_error = $4::text,
           delivered_at = CASE WHEN $2::text = 'delivered' THEN now() END,
           failed_at = CASE WHEN $2::text = 'failed' THEN now() END,
           updated_at = now()
         WHERE id = $1 AND status = 'pending'
         RETURNING id)
       SELECT count(*) FROM updated`,
      params,
    );
  }

  private async send(rawUrl: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<SendResult> {
    try {
      // Checked again now, not only at registration: rules or DNS may have changed since.
      const url = await this.http.assertCallable(rawUrl, 'webhook_url');
      return await sendWebhook(url, headers, body, timeoutMs, this.http);
    } catch (error) {
      return { status: null, headers: {}, body: null, latencyMs: 0, errorClass: 'blocked_target', error: (error as Error).message };
    }
  }

  /**
   * A success clears the failure streak. A 410 Gone disables the endpoint at
   * once (Standard Webhooks); otherwise an endpoint failing every attempt for
   * `disableAfterSeconds` is disabled. Either way the developer gets a mail.
   */
  private async trackHealth(appId: string, failingSince: Date | null, ok: boolean, gone: boolean, email: string): Promise<void> {
    if (ok) {
      if (failingSince) await this.dataSource.query(`UPDATE webhook_profiles SET failing_since = NULL WHERE app_id = $1`, [appId]);
      return;
    }
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
        to: email,
        subject: 'Webhook endpoint disabled',
        text: `Webhook deliveries for app ${appId} are paused: ${reason}.\nFix the endpoint, re-enable it with PUT /v1/providers/apps/${appId}/webhook {"enabled": true}, then re-send missed events with POST /v1/providers/apps/${appId}/webhook/recover.`,
      });
    });
  }
}
