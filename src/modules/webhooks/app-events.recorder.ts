import { Injectable } from '@nestjs/common';
import type { Tx } from '../../infra/database/sql-repository';
import type { DomainEvent } from '../events/domain-event';
import { OnDomainEvents } from '../events/on-domain-event.decorator';
import { AppEventsRepository, NewAppEvent } from './app-events.repository';
import { WEBHOOK_EVENT_TYPES } from './webhook-contract';
import { envelope } from './webhook-deliveries.service';

const KEPT = new Set<string>(WEBHOOK_EVENT_TYPES);

/**
 * Keeps every webhook-able event of an app for the events API (worker role),
 * subscribed or not, so a provider whose endpoint missed deliveries (or who
 * had none) can catch up by event id. Set-based: one insert per dispatch
 * batch, in the dispatcher's transaction, so an event is kept exactly when it
 * is dispatched; a re-dispatch after a crash writes nothing twice. Separate
 * from the fan-out on purpose: what is kept does not depend on endpoints.
 */
@Injectable()
export class AppEventRecorder {
  constructor(private readonly events: AppEventsRepository) {}

  @OnDomainEvents('*')
  async onEvents(events: DomainEvent[], manager: Tx): Promise<void> {
    const kept: NewAppEvent[] = [];
    for (const event of events) {
      if (!KEPT.has(event.type)) continue;
      const { app_id: appId, data } = event.payload as { app_id?: unknown; data?: unknown };
      // The fan-out logs such an event; nothing to keep without an app or a body.
      if (typeof appId !== 'string' || !data || typeof data !== 'object') continue;
      const { body } = envelope({
        eventId: event.id,
        type: event.type,
        createdAt: event.createdAt,
        appId,
        data: data as Record<string, unknown>,
      });
      kept.push({ id: event.id, appId, type: event.type, body, createdAt: event.createdAt });
    }
    if (kept.length > 0) await this.events.insertMany(manager, kept);
  }
}
