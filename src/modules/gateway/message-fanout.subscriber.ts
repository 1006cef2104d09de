import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { REDIS } from '../../infra/redis/redis.module';
import { DomainEvent } from '../events/domain-events';
import { OnDomainEvent } from '../events/on-domain-event.decorator';
import { MESSAGE_CREATED, MessageCreatedPayload } from '../messages/messages.service';
import { BusEvent, userChannel } from '../../infra/realtime/gateway-channels';

/**
 * Worker side of the gateway: turns each committed `message.created` into a
 * publication on the channels of the sender and of every linked recipient.
 * A recipient's copy names the sender by the recipient's own contact for them
 * (`sender_contact_id`, null when they have not added the sender), never by user id.
 * Whichever api instances hold their sockets deliver it. A Redis outage makes
 * the publish throw, so the dispatcher retries the event later; a client
 * offline at that moment catches up with `sync`.
 */
@Injectable()
export class MessageFanout {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  @OnDomainEvent(MESSAGE_CREATED)
  async fanOut(event: DomainEvent): Promise<void> {
    const payload = event.payload as MessageCreatedPayload;
    const item = {
      id: payload.message_id,
      recipient_kind: payload.recipient_kind,
      type: payload.type,
      content: payload.content,
      status: 'sent',
      created_at: payload.created_at,
    };
    const pipeline = this.redis.pipeline();
    const publish = (userId: string, data: Record<string, unknown>) =>
      pipeline.publish(userChannel(this.config.redisPrefix, userId), JSON.stringify({ type: 'message.created', data } satisfies BusEvent));
    publish(payload.sender_id, { ...item, direction: 'outbound', sender_contact_id: null, recipient_id: payload.recipient_id });
    for (const userId of payload.recipient_user_ids) {
      const senderContactId = payload.sender_contact_ids?.[userId] ?? null;
      if (userId !== payload.sender_id)
        publish(userId, { ...item, direction: 'inbound', sender_contact_id: senderContactId, recipient_id: userId });
    }
    const results = (await pipeline.exec()) ?? [];
    const failed = results.find(([error]) => error);
    if (failed?.[0]) throw failed[0];
  }
}
