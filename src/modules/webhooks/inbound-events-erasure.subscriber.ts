import { Injectable } from '@nestjs/common';
import type { Tx } from '../../infra/database/sql-repository';
import { DomainEvent } from '../events/domain-events';
import { OnDomainEvents } from '../events/on-domain-event.decorator';
import { InboundWebhookEventsRepository } from './inbound-webhook-events.repository';

/**
 * Recorded by the privacy area's AccountEraser in the transaction that erases
 * an account (`DELETE /v1/me`, docs/privacy.md): `{ user_id }`.
 */
const ACCOUNT_ERASED = 'account.erased';

/**
 * The webhooks area's part of an account erasure (worker role, from the event
 * outbox): the events providers sent about the user (`inbound_webhook_events`
 * holds their data and has no foreign key to the user) are deleted, in the
 * dispatcher's transaction. Idempotent: a retried event finds nothing left.
 */
@Injectable()
export class InboundEventsErasure {
  constructor(private readonly inbound: InboundWebhookEventsRepository) {}

  @OnDomainEvents(ACCOUNT_ERASED)
  async erase(events: DomainEvent[], manager: Tx): Promise<void> {
    const userIds = events.map((event) => (event.payload as { user_id?: unknown }).user_id).filter((id) => typeof id === 'string');
    if (userIds.length > 0) await this.inbound.deleteForUsers(manager, userIds);
  }
}
