import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { OutboundHttp } from '../../common/http/outbound-http';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { MailOutbox } from '../../infra/mail/mail-outbox';
import { AppsService } from '../providers/apps.service';
import { MAX_CHAIN_MS, MAX_RETRIES, retryDelayMs, verdictFor } from './delivery-policy';
import { DeliveryRow } from './webhook-deliveries.service';
import { ProfileRow, WebhookProfiles } from './webhook-profiles.service';
import { sendWebhook, SendResult } from './webhook-sender';
import { redactHeaders, signatureHeaders } from './webhook-signature';

export const USER_AGENT = 'Service-Webhooks/1.0';

export type AttemptResult =
  { kind: 'skipped' } | { kind: 'not_due'; at: Date } | { kind: 'done'; status: 'delivered' | 'failed' } | { kind: 'retry'; at: Date };

/**
 * One attempt of one delivery, with everything around it: claiming the
 * attempt number (two workers never send the same attempt), signing the
 * stored bytes, the response table, the retry schedule, the attempt log and
 * disabling endpoints that keep failing.
 */
@Injectable()
export class DeliveryAttempts {
  private readonly logger = new Logger(DeliveryAttempts.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly profiles: WebhookProfiles,
    private readonly apps: AppsService,
    private readonly mail: MailOutbox,
    private readonly http: OutboundHttp,
  ) {}

  async load(deliveryId: string): Promise<DeliveryRow | null> {
    const [row]: DeliveryRow[] = await this.dataSource.query(`SELECT * FROM webhook_deliveries WHERE id = $1`, [deliveryId]);
    return row ?? null;
  }

  /** The longest an attempt to this app's endpoint may take (the slot hold). */
  async timeoutOf(appId: string): Promise<number> {
    return (await this.profiles.find(appId))?.timeout_ms ?? 30_000;
  }

  async attempt(delivery: DeliveryRow): Promise<AttemptResult> {
    if (delivery.status !== 'pending') return { kind: 'skipped' };
    if (delivery.next_attempt_at.getTime() > Date.now() + 50) return { kind: 'not_due', at: delivery.next_attempt_at };
    const profile = await this.profiles.find(delivery.app_id);
    const target = await this.apps.webhookTarget(delivery.app_id);
    if (!profile || profile.disabled_at || !target?.webhook_url) {
      await this.finish(delivery.id, 'failed', null, profile?.disabled_at ? 'endpoint_disabled' : 'no_webhook_profile');
      return { kind: 'done', status: 'failed' };
    }

    const attempt = delivery.attempt_count + 1;
    // Claim the attempt number first: a stalled job re-run by BullMQ, or a sweep, cannot send the same attempt twice at once.
    const [, claimed]: [unknown, number] = await this.dataSource.query(
      `UPDATE webhook_deliveries SET attempt_count = $2, updated_at = now() WHERE id = $1 AND status = 'pending' AND attempt_count = $3`,
      [delivery.id, attempt, delivery.attempt_count],
    );
    if (claimed === 0) return { kind: 'skipped' };

    const startedAt = new Date();
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    const messageId = (JSON.parse(delivery.body) as { id: string }).id;
    const headers: Record<string, string> = {
      'User-Agent': USER_AGENT,
      'X-Service-Event-Id': messageId,
      'X-Service-Event-Type': delivery.event_type,
      'X-Service-Delivery-Id': delivery.id,
      'X-Service-Delivery-Attempt': String(attempt),
      'X-Service-Timestamp': String(timestamp),
      ...signatureHeaders(this.profiles.signingSecrets(profile, startedAt), messageId, timestamp, delivery.body),
    };

    const result = await this.send(target.webhook_url, headers, delivery.body, profile.timeout_ms);
    const verdict = result.errorClass === 'blocked_target' ? ({ outcome: 'failed' } as const) : verdictFor(result.status, result.headers);
    const exhausted = attempt > MAX_RETRIES;
    let outcome: 'delivered' | 'retry' | 'failed' = verdict.outcome;
    let nextAt: Date | null = null;
    if (verdict.outcome === 'retry') {
      const delay = retryDelayMs(attempt, this.config.webhooks.retryBaseMs, verdict.retryAfterMs);
      nextAt = new Date(Date.now() + delay);
      if (exhausted || nextAt.getTime() - delivery.chain_started_at.getTime() > MAX_CHAIN_MS) outcome = 'failed';
    }

    await this.dataSource.query(
      `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, request_headers, status_code, latency_ms, response_body, error_class, outcome)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
      [
        delivery.id,
        attempt,
        startedAt,
        JSON.stringify(redactHeaders(headers)),
        result.status,
        result.latencyMs,
        result.body,
        result.errorClass ?? (result.status !== null && outcome !== 'delivered' ? `http_${result.status}` : null),
        outcome,
      ],
    );
    const error = result.errorClass ?? (outcome === 'delivered' ? null : `http_${result.status}`);
    if (outcome === 'retry') {
      await this.dataSource.query(
        `UPDATE webhook_deliveries SET next_attempt_at = $2, last_status_code = $3, last_error = $4, updated_at = now() WHERE id = $1 AND status = 'pending'`,
        [delivery.id, nextAt, result.status, error],
      );
    } else {
      await this.finish(delivery.id, outcome, result.status, error);
    }
    await this.trackHealth(profile, outcome === 'delivered', 'disable' in verdict && verdict.disable === true, target.developer_email);
    return outcome === 'retry' ? { kind: 'retry', at: nextAt! } : { kind: 'done', status: outcome };
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

  private async finish(id: string, status: 'delivered' | 'failed', code: number | null, error: string | null): Promise<void> {
    await this.dataSource.query(
      `UPDATE webhook_deliveries SET status = $2, last_status_code = COALESCE($3, last_status_code), last_error = $4,
              delivered_at = CASE WHEN $2 = 'delivered' THEN now() END, failed_at = CASE WHEN $2 = 'failed' THEN now() END, updated_at = now()
        WHERE id = $1 AND status = 'pending'`,
      [id, status, code, error],
    );
  }

  /**
   * A success clears the failure streak. A 410 Gone disables the endpoint at
   * once (Standard Webhooks); otherwise an endpoint failing every attempt for
   * `disableAfterSeconds` is disabled. Either way the developer gets a mail.
   */
  private async trackHealth(profile: ProfileRow, ok: boolean, gone: boolean, email: string): Promise<void> {
    if (ok) {
      if (profile.failing_since)
        await this.dataSource.query(`UPDATE webhook_profiles SET failing_since = NULL WHERE app_id = $1`, [profile.app_id]);
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
        [profile.app_id, gone, this.config.webhooks.disableAfterSeconds, reason],
      );
      if (!row?.disabled) return;
      this.logger.warn({ appId: profile.app_id, reason }, 'webhook endpoint disabled');
      await this.mail.enqueue(manager, {
        to: email,
        subject: 'Webhook endpoint disabled',
        text: `Webhook deliveries for app ${profile.app_id} are paused: ${reason}.\nFix the endpoint, re-enable it with PUT /v1/providers/apps/${profile.app_id}/webhook {"enabled": true}, then re-send missed events with POST /v1/providers/apps/${profile.app_id}/webhook/recover.`,
      });
    });
  }
}
