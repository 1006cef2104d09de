import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { Idempotency } from '../../common/idempotency/idempotency.service';
import { isId, newId } from '../../common/ids';
import { contactForUserSql } from '../contacts/contact-links';
import { ContactsService, Recipient } from '../contacts/contacts.service';
import { GroupsService } from '../contacts/groups.service';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { GatewayBus } from '../../infra/realtime/gateway-bus';
import { DomainEvents } from '../events/domain-events';
import { DURABLE_COPY_DELAY_MS, MESSAGE_CREATED, MessageCreatedPayload, messageCreatedPublications } from './message-created';
import {
  DEFAULT_HISTORY_LIMIT,
  MessageDirection,
  MessageHistoryDto,
  MessageHistoryQueryDto,
  MessageItemDto,
  MessageSentDto,
  SendMessageDto,
} from './dto/message.dto';
import { MessageEntity, MessageType, RecipientKind } from './entities/message.entity';
import { decodeCursor, encodeCursor, MessagePosition, positionAtSql } from './message-cursor';

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

interface ThreadRow {
  id: string;
  direction: MessageDirection;
  recipient_id: string;
  type: MessageType;
  content: string;
  status: string;
  created_at: Date;
  position_at: string;
}

/** An item of a thread with `withId`: what the contact sent is marked with that contact, never with their user id. */
function toItem(row: ThreadRow, withId: string): MessageItemDto {
  return {
    id: row.id,
    direction: row.direction,
    sender_contact_id: row.direction === 'inbound' ? withId : null,
    recipient_id: row.recipient_id,
    type: row.type,
    content: row.content,
    status: row.status,
    created_at: row.created_at.toISOString(),
  };
}

const unknownRecipient = (id: string) => new ApiError('NOT_FOUND', `No contact or group ${id}`);

/** Sending messages to contacts and groups, and reading a thread with one of them. */
@Injectable()
export class MessagesService {
  private readonly logger = new Logger(MessagesService.name);

  constructor(
    @InjectRepository(MessageEntity) private readonly messages: Repository<MessageEntity>,
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
    let created: MessageCreatedPayload | undefined;
    const outcome = await this.idempotency.run(userId, SEND_SCOPE, idempotencyKey, request, async (manager) => {
      created = await this.sendWithin(manager, userId, request);
      return { status: 201, body: { id: created.message_id, status: 'sent', created_at: created.created_at } satisfies MessageSentDto };
    });
    if (created && !outcome.replayed) this.publishNow(created, options);
    return { status: outcome.status, body: outcome.body as MessageSentDto, replayed: outcome.replayed };
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

  /** `GET /v1/messages?with=…`: newest first, keyset-paginated. */
  async history(userId: string, query: MessageHistoryQueryDto): Promise<MessageHistoryDto> {
    const limit = query.limit ?? DEFAULT_HISTORY_LIMIT;
    const before = query.cursor === undefined ? null : decodeCursor(query.cursor);
    const rows = await this.thread(userId, query.with, limit + 1, before);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      messages: page.map((row) => toItem(row, query.with)),
      next_cursor: rows.length > limit ? encodeCursor({ at: last.position_at, id: last.id }) : null,
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
    return (await this.thread(userId, contactId, bounded, null)).map((row) => toItem(row, contactId));
  }

  /**
   * Messages the user sent (with their recipients) and messages linked users
   * sent to the user, for the export. Other users appear as the user's own
   * contact ids, as everywhere else.
   */
  async exportFor(userId: string, manager: EntityManager): Promise<{ sent: unknown[]; received: unknown[] }> {
    const sent: Array<Record<string, unknown> & { created_at: Date; recipients: Array<Record<string, string | null>> }> =
      await manager.query(
        `SELECT m.id, m.recipient_kind, m.recipient_id, m.type, m.content, m.status, m.created_at,
              COALESCE(json_agg(json_build_object(
                'contact_id', r.contact_id, 'status', r.status,
                'delivered_at', r.delivered_at, 'read_at', r.read_at) ORDER BY r.contact_id)
                FILTER (WHERE r.message_id IS NOT NULL), '[]') AS recipients
         FROM messages m LEFT JOIN message_recipients r ON r.message_id = m.id
        WHERE m.sender_id = $1
        GROUP BY m.id ORDER BY m.created_at, m.id`,
        [userId],
      );
    const received: Array<Record<string, unknown> & { created_at: Date; delivered_at: Date | null; read_at: Date | null }> =
      await manager.query(
        `SELECT DISTINCT ON (m.created_at, m.id) m.id, ${contactForUserSql('$1', 'm.sender_id')} AS sender_contact_id,
              m.type, m.content, m.created_at, r.status, r.delivered_at, r.read_at
         FROM messages m JOIN message_recipients r ON r.message_id = m.id
        WHERE r.recipient_user_id = $1 AND m.sender_id <> $1
        ORDER BY m.created_at, m.id`,
        [userId],
      );
    const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());
    return {
      sent: sent.map((row) => ({
        ...row,
        created_at: iso(row.created_at),
        recipients: row.recipients.map((r) => ({ ...r, delivered_at: iso(r.delivered_at), read_at: iso(r.read_at) })),
      })),
      received: received.map((row) => ({
        ...row,
        created_at: iso(row.created_at),
        delivered_at: iso(row.delivered_at),
        read_at: iso(row.read_at),
      })),
    };
  }

  private async sendWithin(manager: EntityManager, userId: string, request: SendRequest): Promise<MessageCreatedPayload> {
    const { kind, recipients } = await this.resolveRecipient(manager, userId, request.recipient_id);
    const id = newId('msg');
    // The message and its recipient rows in one statement.
    const [{ created_at: createdAt }]: Array<{ created_at: Date }> = await manager.query(
      `WITH message AS (
         INSERT INTO messages (id, sender_id, recipient_kind, recipient_id, type, content, status)
         VALUES ($1, $2, $3, $4, $5, $6, 'sent') RETURNING id, created_at
       ), recipients AS (
         INSERT INTO message_recipients (message_id, contact_id, recipient_user_id)
         SELECT message.id, r.contact_id, r.recipient_user_id
           FROM message, unnest($7::text[], $8::text[]) AS r(contact_id, recipient_user_id)
       )
       SELECT created_at FROM message`,
      [
        id,
        userId,
        kind,
        request.recipient_id,
        request.type,
        request.content,
        recipients.map((r) => r.contactId),
        recipients.map((r) => r.linkedUserId),
      ],
    );
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
  ): Promise<{ kind: RecipientKind; recipients: Recipient[] }> {
    if (isId(recipientId, 'grp')) {
      const members = await this.groups.findRecipients(userId, recipientId, manager);
      if (!members) throw unknownRecipient(recipientId);
      if (members.length === 0) throw new ApiError('BAD_REQUEST', `Group ${recipientId} has no members; add contacts to it first`);
      return { kind: 'group', recipients: members };
    }
    const contact = await this.contacts.findRecipient(userId, recipientId, manager);
    if (!contact) throw unknownRecipient(recipientId);
    return { kind: 'contact', recipients: [contact] };
  }

  /**
   * A thread, newest first, strictly older than `before` when given.
   * With a contact: what the user sent to it directly (not via groups), and what
   * the contact's linked user sent to the user. With a group: what the user sent to it.
   */
  private async thread(userId: string, withId: string, take: number, before: MessagePosition | null): Promise<ThreadRow[]> {
    let kind: RecipientKind;
    let linkedUserId: string | null = null;
    if (isId(withId, 'grp')) {
      if (!(await this.groups.owns(userId, withId))) throw unknownRecipient(withId);
      kind = 'group';
    } else {
      const contact = await this.contacts.findRecipient(userId, withId);
      if (!contact) throw unknownRecipient(withId);
      kind = 'contact';
      linkedUserId = contact.linkedUserId;
    }
    const older = `($5::timestamptz IS NULL OR (m.created_at, m.id) < ($5::timestamptz, $6::text))`;
    const columns = `m.id, m.type, m.content, m.status, m.created_at, ${positionAtSql('m.created_at')} AS position_at`;
    return this.messages.query<ThreadRow[]>(
      `SELECT * FROM (
         (SELECT ${columns}, 'outbound'::text AS direction, m.recipient_id
            FROM messages m
           WHERE m.sender_id = $1 AND m.recipient_kind = $2 AND m.recipient_id = $3 AND ${older}
           ORDER BY m.created_at DESC, m.id DESC LIMIT $7)
         UNION ALL
         (SELECT ${columns}, 'inbound'::text AS direction, $1::text AS recipient_id
            FROM messages m
           WHERE $4::text IS NOT NULL AND m.sender_id = $4::text AND ${older}
             AND EXISTS (SELECT 1 FROM message_recipients r WHERE r.message_id = m.id AND r.recipient_user_id = $1)
           ORDER BY m.created_at DESC, m.id DESC LIMIT $7)
       ) thread
       ORDER BY created_at DESC, id DESC LIMIT $7`,
      [userId, kind, withId, linkedUserId, before?.at ?? null, before?.id ?? null, take],
    );
  }
}
