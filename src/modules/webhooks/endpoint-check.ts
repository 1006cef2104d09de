import { Injectable, Logger } from '@nestjs/common';
import { newId } from '../../common/ids';
import { OutboundHttp } from '../../common/http/outbound-http';
import { attemptHeaders } from './delivery-attempts';
import { envelope } from './webhook-deliveries.service';
import { AttemptRecord, WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { EndpointRecord, PingResult, WebhookEndpointsRepository } from './webhook-endpoints.repository';
import { WebhookProfiles } from './webhook-profiles.service';
import { sendWebhook, SendResult } from './webhook-sender';
import { newWebhookSecret, redactHeaders } from './webhook-signature';

/** The event type of an endpoint check. Never fanned out, so no subscription (not even `*`) receives it. */
export const PING_EVENT = 'ping';

/** A check answers within the request that registered the endpoint: each of its two requests waits this long at most. */
const PING_TIMEOUT_MS = 5_000;

/**
 * The endpoint check (GitHub's `ping`): when an endpoint is created or its
 * URL changes, a signed `ping` event is sent at once and its result returned
 * and kept on the endpoint. When the receiver accepts it, a second ping
 * signed with a throwaway secret follows: a receiver that verifies
 * signatures refuses that one (4xx), one that does not accepts it too, so the
 * provider sees which kind they deployed. The signed ping is logged as a test
 * delivery of the endpoint (its attempt included); the probe is not.
 */
@Injectable()
export class EndpointCheck {
  private readonly logger = new Logger(EndpointCheck.name);

  constructor(
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly profiles: WebhookProfiles,
    private readonly http: OutboundHttp,
  ) {}

  /** Pings the endpoint and keeps the result on it; null when the check itself could not be recorded. */
  async run(endpoint: EndpointRecord): Promise<PingResult | null> {
    try {
      const result = await this.ping(endpoint);
      await this.endpoints.recordPing(endpoint.id, result);
      return result;
    } catch (error) {
      // The endpoint exists either way; a check that could not be recorded is reported as none.
      this.logger.warn({ endpointId: endpoint.id, error: (error as Error).message }, 'webhook endpoint check not recorded');
      return null;
    }
  }

  private async ping(endpoint: EndpointRecord): Promise<PingResult> {
    const at = new Date();
    const deliveryId = newId('dlv');
    const eventId = newId('evt');
    const { body, idempotencyKey } = envelope({
      eventId,
      type: PING_EVENT,
      createdAt: at,
      appId: endpoint.app_id,
      data: { endpoint_id: endpoint.id, url: endpoint.target_url, event_types: endpoint.event_types },
    });
    const delivery = { id: deliveryId, event_id: eventId, event_type: PING_EVENT, body, test: true };
    const timestamp = Math.floor(at.getTime() / 1000);
    const headers = attemptHeaders(delivery, 1, timestamp, this.profiles.signingSecrets(endpoint));
    const timeoutMs = Math.min(endpoint.timeout_ms, PING_TIMEOUT_MS);
    const url = await this.callable(endpoint.target_url);
    const sent: SendResult = url
      ? await sendWebhook(url, headers, body, timeoutMs, this.http)
      : { status: null, headers: {}, body: null, latencyMs: 0, errorClass: 'blocked_target', error: 'the URL is not callable' };
    const ok = sent.status !== null && sent.status >= 200 && sent.status < 300;
    const error = sent.errorClass ?? (ok ? null : `http_${sent.status}`);

    const attempt: AttemptRecord = {
      deliveryId,
      outcome: ok ? 'delivered' : 'failed',
      code: sent.status,
      error,
      nextAt: null,
      logged: { attempt: 1, startedAt: at, headers: redactHeaders(headers), latencyMs: sent.latencyMs, body: sent.body, errorClass: error },
      gone: false,
    };
    await this.deliveries.insertSent(
      { id: deliveryId, appId: endpoint.app_id, endpointId: endpoint.id, eventId, type: PING_EVENT, idempotencyKey, body, test: true },
      attempt,
    );
    return {
      at: at.toISOString(),
      delivery_id: deliveryId,
      status_code: sent.status,
      ok,
      latency_ms: sent.latencyMs,
      error,
      signature_check: ok && url ? await this.probe(url, endpoint, timeoutMs) : 'unknown',
    };
  }

  /** A second ping signed with a secret the receiver cannot know: refused (4xx) means it verifies signatures. */
  private async probe(url: URL, endpoint: EndpointRecord, timeoutMs: number): Promise<PingResult['signature_check']> {
    const eventId = newId('evt');
    const at = new Date();
    const { body } = envelope({
      eventId,
      type: PING_EVENT,
      createdAt: at,
      appId: endpoint.app_id,
      data: { endpoint_id: endpoint.id, url: endpoint.target_url, event_types: endpoint.event_types },
    });
    const delivery = { id: newId('dlv'), event_id: eventId, event_type: PING_EVENT, body, test: true };
    const headers = attemptHeaders(delivery, 1, Math.floor(at.getTime() / 1000), { current: newWebhookSecret(), previous: null });
    const answer = await sendWebhook(url, headers, body, timeoutMs, this.http);
    if (answer.status === null) return 'unknown';
    if (answer.status >= 200 && answer.status < 300) return 'not_verified';
    return answer.status >= 400 && answer.status < 500 ? 'verified' : 'unknown';
  }

  /** The URL as the drain would call it (the target policy, names resolved at connect time); null when refused. */
  private async callable(target: string | null): Promise<URL | null> {
    if (!target) return null;
    try {
      return await this.http.assertCallable(target, 'url', { resolve: false });
    } catch {
      return null;
    }
  }
}
