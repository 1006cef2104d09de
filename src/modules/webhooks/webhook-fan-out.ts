import { Injectable, Logger } from '@nestjs/common';
import { isId, newId } from '../../common/ids';
import type { Tx } from '../../infra/database/sql-repository';
import { DomainEvent } from '../events/domain-events';
import { OnDomainEvents } from '../events/on-domain-event.decorator';
import { WEBHOOK_EVENT_TYPES } from './dto/webhook.dto';
import { envelope } from './webhook-deliveries.service';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhookProfilesRepository } from './webhook-profiles.repository';

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
 * one query reads the profiles of every app in the batch, and one statement
 * writes every delivery row and, for each endpoint with new pending ones, its
 * drain job in the job outbox. All of it commits with the events being marked
 * dispatched, so a delivery exists exactly when its event was dispatched, and
 * a drain of its endpoint is queued whenever it is pending. A dispatch that runs again after a crash writes
 * no delivery twice (unique event per app); a second drain job finds nothing
 * to do.
 */
@Injectable()
export class WebhookFanOut {
  private readonly logger = new Logger(WebhookFanOut.name);

  constructor(
    private readonly profiles: WebhookProfilesRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
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

    const profiles = await this.profiles.subscriptionsOf(manager, [...new Set(candidates.map((c) => c.appId))]);
    const byApp = new Map(profiles.map((p) => [p.app_id, p]));
    const rows = candidates.flatMap(({ event, appId, data, packageId }) => {
      const profile = byApp.get(appId);
      if (!profile || !(profile.event_types.includes('*') || profile.event_types.includes(event.type))) return [];
      const { body, idempotencyKey } = envelope({ eventId: event.id, type: event.type, createdAt: event.createdAt, appId, data });
      return [
        { id: newId('dlv'), appId, eventId: event.id, type: event.type, idempotencyKey, body, disabled: profile.disabled, packageId },
      ];
    });
    if (rows.length === 0) return;

    // One drain job per endpoint that got a pending delivery in this statement.
    const apps = [...new Set(rows.filter((r) => !r.disabled).map((r) => r.appId))];
    await this.deliveries.insertFanOut(
      manager,
      rows,
      apps.map((appId) => ({ jobId: newId('job'), appId })),
    );
  }
}
