import { Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { DomainEvent } from '../events/domain-events';
import type { DispatchContext } from '../events/event-dispatcher';
import { OnDomainEvent } from '../events/on-domain-event.decorator';
import { WEBHOOK_EVENT_TYPES } from './dto/webhook.dto';
import { WebhookDeliveries } from './webhook-deliveries.service';
import { WebhookDeliveryQueue } from './webhook-delivery.queue';
import { WebhookProfiles } from './webhook-profiles.service';

const DELIVERABLE = new Set<string>(WEBHOOK_EVENT_TYPES);

/**
 * Turns outbox events into deliveries (worker role). The delivery row commits
 * with the event being marked dispatched, and its job is enqueued right after
 * that commit, so the job always finds its row (enqueued inside the
 * transaction, nearly every job ran first, found nothing and waited out a
 * retry). If the process dies between the commit and the enqueue, the
 * sweeper finds the pending row without a job.
 */
@Injectable()
export class WebhookFanOut {
  private readonly logger = new Logger(WebhookFanOut.name);

  constructor(
    private readonly profiles: WebhookProfiles,
    private readonly deliveries: WebhookDeliveries,
    private readonly queue: WebhookDeliveryQueue,
  ) {}

  @OnDomainEvent('*')
  async onEvent(event: DomainEvent, manager: EntityManager, context: DispatchContext): Promise<void> {
    if (!DELIVERABLE.has(event.type)) return;
    const { app_id: appId, data } = event.payload as { app_id?: string; data?: Record<string, unknown> };
    if (!appId || !data) {
      this.logger.warn({ eventId: event.id, type: event.type }, 'webhook-able event without app_id or data; not delivered');
      return;
    }
    const profile = await this.profiles.find(appId, manager);
    if (!profile || !this.profiles.subscribes(profile, event.type)) return;
    const row = await this.deliveries.create(
      manager,
      { eventId: event.id, type: event.type, createdAt: event.createdAt, appId, data },
      { disabled: profile.disabled_at !== null },
    );
    if (row?.status === 'pending') context.afterCommit(() => this.queue.enqueue(row.id));
  }
}
