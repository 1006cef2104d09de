import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { GatewayBus } from '../../infra/realtime/gateway-bus';
import { EntityManager } from 'typeorm';
import { ContactsService } from '../contacts/contacts.service';
import { DomainEvent } from '../events/domain-events';
import { OnDomainEvents } from '../events/on-domain-event.decorator';
import { MESSAGE_CREATED, MessageCreatedPayload, messageCreatedPublications } from '../messages/message-created';

/**
 * The durable path of `message.created` (worker role). The api instance that
 * committed a message publishes it at once (the fast path, MessagesService);
 * this publishes it again from the outbox a moment later, for the sockets the
 * fast path missed (the instance died between commit and publish, Redis
 * blinked). Sockets drop a copy they already delivered (by message id), and a
 * client offline at both moments catches up with `sync`. A Redis outage makes
 * the publish throw, so the dispatcher retries the event later.
 */
@Injectable()
export class MessageFanout {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly bus: GatewayBus,
    private readonly contacts: ContactsService,
  ) {}

  @OnDomainEvents(MESSAGE_CREATED)
  async fanOut(events: DomainEvent[], manager: EntityManager): Promise<void> {
    // The receivers' contacts for the sender note the interaction too, with the dispatch.
    await this.contacts.recordReceived(
      manager,
      events.flatMap((event) => {
        const payload = event.payload as MessageCreatedPayload;
        return Object.values(payload.sender_contact_ids ?? {}).map((contactId) => ({ contactId, at: payload.created_at }));
      }),
    );
    const publications = events.flatMap((event) =>
      messageCreatedPublications(this.config.redisPrefix, event.payload as MessageCreatedPayload, { durable: true }),
    );
    // ioredis writes these back to back on one connection: one round trip's worth, not one per publication.
    await Promise.all(publications.map(({ channel, event }) => this.bus.publish(channel, event)));
  }
}
