import { Injectable, Logger } from '@nestjs/common';
import { isId, newId } from '../../common/ids';
import type { Tx } from '../../infra/database/sql-repository';
import { JobOutbox } from '../../infra/queue/job-outbox';
import { DomainEvent } from '../events/domain-events';
import { OnDomainEvents } from '../events/on-domain-event.decorator';
import { WEBHOOK_EVENT_TYPES } from './dto/webhook.dto';
import { envelope } from './webhook-deliveries.service';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { EndpointSubscription, WebhookEndpointsRepository } from './webhook-endpoints.repository';

const DELIVERABLE = new Set<string>(WEBHOOK_EVENT_TYPES);

/**
 * The package a delivery concerns, for the delivery log: `data.package_id`
 * (package.* and install.* events), else the `package_id` the recorder put
 * beside the data (capability.* events, whose data names the install only).
 * Null when the event names no package.
 */
function packageOf(data: Record<string, unknown>, aside: unknown): string | null {
  const id = data.package_id ?? aside;
  return isId(id, 'pkg') ? (id as string) : null;
}

/**
 * Turns a batch of outbox events into deliveries (worker role), set-based:
 * one query reads the endpoints of every app in the batch, and one statement
 * writes a delivery row for every endpoint that subscribes to each event and,
 * for each endpoint with new pending ones, its drain job in the job outbox,
 * which this process adds to BullMQ right after the commit (no relay is
 * woken for it; the relay's sweep moves it if this process could not).
 * All of it commits with the events being marked dispatched, so a delivery
 * exists exactly when its event was dispatched, and a drain of its endpoint
 * is queued whenever it is pending. A dispatch that runs again after a crash
 * writes no delivery twice (unique event per endpoint); a second drain job
 * finds nothing to do. The body is serialised once per event: every endpoint
 * receives the same bytes, signed with its own secret when sent.
 */
@Injectable()
export class WebhookFanOut {
  private readonly logger = new Logger(WebhookFanOut.name);

  constructor(
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly jobs: JobOutbox,
  ) {}

  @OnDomainEvents('*')
  async onEvents(events: DomainEvent[], manager: Tx): Promise<void> {
    const candidates: Array<{ event: DomainEvent; appId: string; data: Record<string, unknown>; packageId: string | null }> = [];
    for (const event of events) {
      if (!DELIVERABLE.has(event.type)) continue;
      const {
        app_id: appId,
        data,
        package_id: aside,
      } = event.payload as {
        app_id?: string;
        data?: Record<string, unknown>;
        package_id?: unknown;
      };
      if (!appId || !data) {
        this.logger.warn({ eventId: event.id, type: event.type }, 'webhook-able event without app_id or data; not delivered');
        continue;
      }
      candidates.push({ event, appId, data, packageId: packageOf(data, aside) });
    }
    if (candidates.length === 0) return;

    const endpoints = await this.endpoints.subscriptionsOf(manager, [...new Set(candidates.map((c) => c.appId))]);
    const byApp = new Map<string, EndpointSubscription[]>();
    for (const endpoint of endpoints) byApp.set(endpoint.app_id, [...(byApp.get(endpoint.app_id) ?? []), endpoint]);
    const rows = candidates.flatMap(({ event, appId, data, packageId }) => {
      const subscribed = (byApp.get(appId) ?? []).filter((e) => e.event_types.includes('*') || e.event_types.includes(event.type));
      if (subscribed.length === 0) return [];
      const { body, idempotencyKey } = envelope({ eventId: event.id, type: event.type, createdAt: event.createdAt, appId, data });
      return subscribed.map((endpoint) => ({
        id: newId('dlv'),
        appId,
        endpointId: endpoint.id,
        eventId: event.id,
        type: event.type,
        idempotencyKey,
        body,
        disabled: endpoint.disabled,
        packageId,
      }));
    });
    if (rows.length === 0) return;

    // One drain job per endpoint that got a pending delivery in this statement.
    const pendingEndpoints = [...new Set(rows.filter((r) => !r.disabled).map((r) => r.endpointId))];
    const drainJobs = await this.deliveries.insertFanOut(
      manager,
      rows,
      pendingEndpoints.map((endpointId) => ({ jobId: newId('job'), endpointId })),
    );
    this.jobs.relayAfterCommit(manager, drainJobs);
  }
}
