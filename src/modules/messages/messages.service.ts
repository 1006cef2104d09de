import { Inject, Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { assertIdempotencyKey, requestHash } from '../../common/idempotency/idempotency-key';
import { Idempotency } from '../../common/idempotency/idempotency.service';
import { isId, newId } from '../../common/ids';
import { ContactsService, Recipient } from '../contacts/contacts.service';
import { GroupsService } from '../contacts/groups.service';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { GatewayBus } from '../../infra/realtime/gateway-bus';
import { DomainEvents } from '../events/domain-events';
import {
  DURABLE_COPY_DELAY_MS,
  MESSAGE_CREATED,
  MessageCreatedPayload,
  messageCreatedPublications,
  outboundStatusAtSend,
} from './message-created';
import {
  DEFAULT_HISTORY_LIMIT,
  MessageHistoryDto,
  MessageHistoryQueryDto,
  MessageItemDto,
  MessageSentDto,
  SendMessageDto,
} from './dto/message.dto';
import { MessageType, RecipientKind } from './entities/message.entity';
import { decodeCursor, encodeCursor } from './message-cursor';
import type { Tx } from '../../infra/database/sql-repository';
import { ContactSends } from './contact-sends.service';
import { MessagesRepository, ThreadScope } from './messages.repository';

/** Scope of `Idempotency-Key` records of `POST /v1/messages`. */
export const SEND_SCOPE = 'messages.send';
/** Outbox event of every sent message; the real-time gateway subscribes to it. */
/** Most messages `conversation()` returns (agents read up to 200). */
export const MAX_CONVERSATION_LIMIT = 500;

export { MESSAGE_CREATED } from './message-created';
export type { MessageCreatedPayload } from './message-created';

export interface SendOptions {
  /** Called once the message has committed, just before it is published: the sending socket marks it as its own. */
  beforePublish?: (messageId: string) => void;
}

export interface SendOutcome {
  status: number;
  body: MessageSentDto;
  /** True when an earlier request with the same Idempotency-Key produced this answer. */
  replayed: boolean;
}

interface SendRequest {
  recipient_id: string;
  content: string;
  type: MessageType;
}

const unknownRecipient = (id: string) => new ApiError('NOT_FOUND', `No contact or group ${id}`);

/** Sending messages to contacts and groups, and reading a thread with one of them. */
@Injectable()
export class MessagesService {
  private readonly logger = new Logger(MessagesService.name);

  constructor(
    private readonly messages: MessagesRepository,
    private readonly contactSends: ContactSends,
    private readonly contacts: ContactsService,
    private readonly groups: GroupsService,
    private readonly idempotency: Idempotency,
    private readonly events: DomainEvents,
    private readonly bus: GatewayBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Sends in one transaction: the message, a recipient row per contact, the
   * contacts' interaction weights and the `message.created` event. With an
   * Idempotency-Key, a repeat of the same request answers the first response.
   */
  async send(userId: string, input: SendMessageDto, idempotencyKey?: string, options: SendOptions = {}): Promise<SendOutcome> {
    // The default is applied before hashing, so omitting `type` and sending `text` are the same request.
    const request: SendRequest = { recipient_id: input.recipient_id, content: input.content, type: input.type ?? 'text' };
    if (isId(request.recipient_id, 'con')) {
      const sent = await this.sendToContact(userId, request, idempotencyKey);
      if (sent) {
        this.events.wakeAfterHold(DURABLE_COPY_DELAY_MS).catch((error: unknown) => {
          this.logger.warn({ err: error }, 'durable-copy wake-up failed; the outbox sweep finds the event');
        });
        this.publishNow(sent, options);
        const body: MessageSentDto = {
          id: sent.message_id,
          status: outboundStatusAtSend(sent.recipient_user_ids),
          created_at: sent.created_at,
        };
        return { status: 201, body, replayed: false };
      }
    }
    let created: MessageCreatedPayload | undefined;
    const outcome = await this.idempotency.run(userId, SEND_SCOPE, idempotencyKey, request, async (manager) => {
      created = await this.sendWithin(manager, userId, request);
      const status = outboundStatusAtSend(created.recipient_user_ids);
      return { status: 201, body: { id: created.message_id, status, created_at: created.created_at } satisfies MessageSentDto };
    });
    if (created && !outcome.replayed) this.publishNow(created, options);
    return { status: outcome.status, body: outcome.body as MessageSentDto, replayed: outcome.replayed };
  }

  /**
   * The common case, a message to one of the user's contacts, in one statement
   * (MessagesRepository.sendToContact, or with the sends around it: ContactSends):
   * the same rows, key and event as the general path below, in one round trip. Null when it wrote nothing (not
   * the user's contact, or the key already taken): the general path then
   * answers NOT_FOUND, the replay or the key conflict.
   */
  private async sendToContact(userId: string, request: SendRequest, idempotencyKey?: string): Promise<MessageCreatedPayload | null> {
    if (idempotencyKey !== undefined) assertIdempotencyKey(idempotencyKey);
    const id = newId('msg');
    const sent = await this.contactSends.send({
      id,
      senderId: userId,
      contactId: request.recipient_id,
      type: request.type,
      content: request.content,
      ...(idempotencyKey === undefined
        ? {}
        : { idempotency: { key: idempotencyKey, scope: SEND_SCOPE, requestHash: requestHash(request) } }),
      event: { id: newId('evt'), type: MESSAGE_CREATED, delayMs: DURABLE_COPY_DELAY_MS },
    });
    if (!sent) return null;
    const linked = sent.linkedUserId;
    return {
      message_id: id,
      sender_id: userId,
      recipient_id: request.recipient_id,
      recipient_kind: 'contact',
      recipient_user_ids: linked === null ? [] : [linked],
      sender_contact_ids: linked !== null && sent.senderContactId !== null ? { [linked]: sent.senderContactId } : {},
      contact_ids: [request.recipient_id],
      type: request.type,
      content: request.content,
      created_at: sent.createdAt,
    };
  }

  /**
   * The real-time fast path: once the message has committed, this instance
   * publishes it to the sender's and recipients' channels, handing it to its
   * own sockets without a Redis round trip. Not awaited by the request, but
   * issued before it answers, so a client that sends one message after the
   * other sees them arrive in that order. A failure is only logged: the
   * durable copy from the outbox follows (DURABLE_COPY_DELAY_MS).
   */
  private publishNow(payload: MessageCreatedPayload, options: SendOptions): void {
    options.beforePublish?.(payload.message_id);
    for (const { channel, event } of messageCreatedPublications(this.config.redisPrefix, payload)) {
      this.bus.publishLocalFirst(channel, event).catch((error: unknown) => {
        this.logger.warn({ err: error, messageId: payload.message_id }, 'fast-path publish failed; the durable copy follows');
      });
    }
  }

  /**
   * For sign-in, inside its transaction: a user who has just taken `address`
   * as their verified email receives what waited for contacts with that
   * address (the pending-contact rule).
   */
  claimPendingForAddress(tx: Tx, userId: string, address: string): Promise<void> {
    return this.messages.claimPendingForAddress(tx, userId, address);
  }

  /**
   * For an account erasure, inside its transaction and before the user row
   * goes: what reached the user stays with its senders but is never handed to
   * a later account of the same address. Answers how many copies.
   */
  sealReceived(tx: Tx, userId: string): Promise<number> {
    return this.messages.sealReceivedBy(tx, userId);
  }

  /** `GET /v1/messages?with=…`: newest first, keyset-paginated. */
  async history(userId: string, query: MessageHistoryQueryDto): Promise<MessageHistoryDto> {
    const limit = query.limit ?? DEFAULT_HISTORY_LIMIT;
    const before = query.cursor === undefined ? null : decodeCursor(query.cursor);
    const rows = await this.messages.thread(userId, await this.scopeOf(userId, query.with), limit + 1, before);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      messages: page.map((message) => message.item),
      next_cursor: rows.length > limit ? encodeCursor({ at: last.positionAt, id: last.item.id }) : null,
    };
  }

  /**
   * The latest `limit` messages between the user and one contact, newest
   * first, as `GET /v1/messages?with=<contact>` lists them. NOT_FOUND when the
   * contact is not the user's.
   */
  async conversation(userId: string, contactId: string, limit: number = DEFAULT_HISTORY_LIMIT): Promise<MessageItemDto[]> {
    if (!isId(contactId, 'con')) throw unknownRecipient(contactId);
    const bounded = Math.min(Math.max(Math.trunc(limit) || 1, 1), MAX_CONVERSATION_LIMIT);
    return (await this.messages.thread(userId, await this.scopeOf(userId, contactId), bounded, null)).map((message) => message.item);
  }

  /**
   * Messages the user sent (with their recipients) and messages linked users
   * sent to the user, for the export. Other users appear as the user's own
   * contact ids, as everywhere else.
   */
  async exportFor(userId: string, manager: EntityManager): Promise<{ sent: unknown[]; received: unknown[] }> {
    const sent = await this.messages.sentForExport(userId, manager);
    const received = await this.messages.receivedForExport(userId, manager);
    return { sent, received };
  }

  private async sendWithin(manager: EntityManager, userId: string, request: SendRequest): Promise<MessageCreatedPayload> {
    const { kind, recipients, groupName } = await this.resolveRecipient(manager, userId, request.recipient_id);
    const id = newId('msg');
    // The message and its recipient rows in one statement.
    const createdAt = await this.messages.insertWithRecipients(manager, {
      id,
      senderId: userId,
      recipientKind: kind,
      recipientId: request.recipient_id,
      type: request.type,
      content: request.content,
      recipients,
    });
    const contactIds = recipients.map((r) => r.contactId);
    await this.contacts.recordInteraction(manager, userId, contactIds, createdAt);
    const recipientUserIds = [...new Set(recipients.flatMap((r) => (r.linkedUserId === null ? [] : [r.linkedUserId])))];
    const senderContactIds = await this.contacts.contactIdsFor(recipientUserIds, userId, manager);
    const payload: MessageCreatedPayload = {
      message_id: id,
      sender_id: userId,
      recipient_id: request.recipient_id,
      recipient_kind: kind,
      recipient_user_ids: recipientUserIds,
      sender_contact_ids: Object.fromEntries(senderContactIds),
      contact_ids: contactIds,
      ...(groupName === undefined ? {} : { group_name: groupName }),
      type: request.type,
      content: request.content,
      created_at: createdAt.toISOString(),
    };
    await this.events.record(manager, { type: MESSAGE_CREATED, payload, delayMs: DURABLE_COPY_DELAY_MS });
    return payload;
  }

  private async resolveRecipient(
    manager: EntityManager,
    userId: string,
    recipientId: string,
  ): Promise<{ kind: RecipientKind; recipients: Recipient[]; groupName?: string }> {
    if (isId(recipientId, 'grp')) {
      const group = await this.groups.findForSending(userId, recipientId, manager);
      if (!group) throw unknownRecipient(recipientId);
      if (group.recipients.length === 0) throw new ApiError('BAD_REQUEST', `Group ${recipientId} has no members; add contacts to it first`);
      return { kind: 'group', recipients: group.recipients, groupName: group.name };
    }
    const contact = await this.contacts.findRecipient(userId, recipientId, manager);
    if (!contact) throw unknownRecipient(recipientId);
    return { kind: 'contact', recipients: [contact] };
  }

  /**
   * Who a thread is with. A contact: what the user sent to it directly (not
   * through a group) and what the contact's linked user sent to the user
   * directly. One of the user's groups: what the user sent to it. Someone
   * else's group the user is a member of (or was reached by): what its owner
   * sent to it that reached the user. NOT_FOUND otherwise.
   */
  private async scopeOf(userId: string, withId: string): Promise<ThreadScope> {
    if (isId(withId, 'grp')) {
      if (await this.groups.owns(userId, withId)) return { outbound: { kind: 'group', recipientId: withId }, inbound: null };
      const group = await this.groups.asMember(userId, withId);
      if (!group || !(group.member || (await this.messages.groupMessageReached(userId, withId)))) throw unknownRecipient(withId);
      return { outbound: null, inbound: { senderId: group.ownerId, kind: 'group', groupId: withId, senderContactId: null } };
    }
    const contact = await this.contacts.findRecipient(userId, withId);
    if (!contact) throw unknownRecipient(withId);
    return {
      outbound: { kind: 'contact', recipientId: withId },
      inbound:
        contact.linkedUserId === null ? null : { senderId: contact.linkedUserId, kind: 'contact', groupId: null, senderContactId: withId },
    };
  }
}
