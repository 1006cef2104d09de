import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { OutboundHttp } from '../../common/http/outbound-http';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { MailOutbox } from '../../infra/mail/mail-outbox';
import { BackboneMetrics } from '../../infra/metrics/backbone-metrics';
import { MAX_CHAIN_MS, MAX_RETRIES, retryDelayMs, verdictFor } from './delivery-policy';
import { AttemptRecord, ClaimedDelivery, WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookEndpointsRepository } from './webhook-endpoints.repository';
import { WebhookProfiles } from './webhook-profiles.service';
import { sendWebhook, SendResult } from './webhook-sender';
import { redactHeaders, signatureHeaders, SigningSecrets } from './webhook-signature';

export const USER_AGENT = 'Service-Webhooks/1.0';

/** Longest delivery timeout (30 s) plus a margin: how long a claimed attempt stays out of other claims. */
export const CLAIM_LEASE_MS = 35_000;

export type { AttemptRecord, ClaimedDelivery } from './webhook-deliveries.repository';

/** What a drain needs of its endpoint, read once per round. */
export interface Endpoint {
  id: string;
  appId: string;
  /** The spec's profile: its mails name the profile's routes. */
  primary: boolean;
  url: URL;
  timeoutMs: number;
  failingSince: Date | null;
  developerEmail: string;
  secrets: SigningSecrets;
}

/**
 * The headers of one attempt: the service's own, and both signature schemes
 * made with the endpoint's secrets over the exact body.
 */
export function attemptHeaders(
  delivery: Pick<ClaimedDelivery, 'id' | 'event_id' | 'event_type' | 'body' | 'test'>,
  attempt: number,
  timestamp: number,
  secrets: SigningSecrets,
): Record<string, string> {
  return {
    'User-Agent': USER_AGENT,
    'X-Service-Event-Id': delivery.event_id,
    'X-Service-Event-Type': delivery.event_type,
    'X-Service-Delivery-Id': delivery.id,
    'X-Service-Delivery-Attempt': String(attempt),
    'X-Service-Timestamp': String(timestamp),
    // Test events (console) are test traffic, like conformance: docs/runtime-auth.md, "Test mode".
    'X-Service-Livemode': String(!delivery.test),
    ...signatureHeaders(secrets, delivery.event_id, timestamp, delivery.body),
  };
}

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
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly endpoints: WebhookEndpointsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly profiles: WebhookProfiles,
    private readonly mail: MailOutbox,
    private readonly http: OutboundHttp,
    private readonly metrics: BackboneMetrics,
  ) {}

  /** The endpoint of a delivery (for `deliver` jobs queued before drains replaced them). */
  async endpointOf(deliveryId: string): Promise<string | null> {
    return this.deliveries.endpointOf(deliveryId);
  }

  /** The app's primary endpoint (for jobs queued before an app had several endpoints). */
  async primaryEndpointOf(appId: string): Promise<string | null> {
    return this.endpoints.primaryIdOf(appId);
  }

  /**
   * The endpoint to send to, or why there is none (`no_webhook_profile`,
   * `endpoint_disabled`, `blocked_target` for a URL the target policy refuses
   * as written). Host names are resolved at connect time, where a name that
   * does not resolve is a retryable `dns_error` and one that resolves inside
   * is `blocked_target`.
   */
  async endpoint(endpointId: string): Promise<Endpoint | { unusable: string }> {
    const row = await this.endpoints.drainTarget(endpointId);
    if (!row || !row.target_url) return { unusable: 'no_webhook_profile' };
    if (row.disabled_at) return { unusable: 'endpoint_disabled' };
    let url: URL;
    try {
      url = await this.http.assertCallable(row.target_url, 'webhook_url', { resolve: false });
    } catch {
      return { unusable: 'blocked_target' };
    }
    return {
      id: row.id,
      appId: row.app_id,
      primary: row.is_primary,
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
  async claim(endpointId: string, limit: number): Promise<ClaimedDelivery[]> {
    return this.deliveries.claimDue(endpointId, limit, CLAIM_LEASE_MS / 1000);
  }

  /** Ends every due delivery of an endpoint that cannot be sent to, without an attempt (nothing was sent). */
  async failDue(endpointId: string, reason: string): Promise<number> {
    return this.deliveries.failDue(endpointId, reason);
  }

  /** Signs and sends one claimed attempt; the outcome is returned for `record`, not written. */
  async send(endpoint: Endpoint, delivery: ClaimedDelivery): Promise<AttemptRecord> {
    const attempt = delivery.attempt_count;
    const startedAt = new Date();
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    const headers = attemptHeaders(delivery, attempt, timestamp, endpoint.secrets);
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
    await this.deliveries.recordOutcomes(records);
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
        await this.endpoints.clearFailing(endpoint.id);
        endpoint.failingSince = null;
      }
      return;
    }
    if (records.length === 0) return;
    const gone = records.some((r) => r.gone);
    const { appId, id: endpointId } = endpoint;
    endpoint.failingSince ??= new Date();
    await this.dataSource.transaction(async (manager) => {
      const reason = gone ? 'endpoint answered 410 Gone' : `every delivery failed for ${this.config.webhooks.disableAfterSeconds} s`;
      const disabled = await this.endpoints.recordFailure(manager, endpointId, gone, this.config.webhooks.disableAfterSeconds, reason);
      if (!disabled) return;
      this.logger.warn({ appId, endpointId, reason }, 'webhook endpoint disabled');
      // The spec's profile keeps the routes its mails always named; another endpoint is named by its own.
      const path = endpoint.primary ? `/v1/providers/apps/${appId}/webhook` : `/v1/providers/apps/${appId}/webhook/endpoints/${endpointId}`;
      const enable = endpoint.primary ? `PUT ${path} {"enabled": true}` : `PATCH ${path} {"enabled": true}`;
      await this.mail.enqueue(manager, {
        to: endpoint.developerEmail,
        subject: 'Webhook endpoint disabled',
        text: `Webhook deliveries for app ${appId}${endpoint.primary ? '' : ` to endpoint ${endpointId}`} are paused: ${reason}.\nFix the endpoint, re-enable it with ${enable}, then re-send missed events with POST ${path}/recover.`,
      });
    });
  }

  /** When the endpoint's next pending delivery is due (a retry, or a claim whose drainer died); null when none is pending. */
  async nextDue(endpointId: string): Promise<Date | null> {
    return this.deliveries.nextDue(endpointId);
  }
}
