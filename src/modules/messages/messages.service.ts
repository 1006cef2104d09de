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
import {
  DURABLE_COPY_DELAY_MS,
  MESSAGE_CREATED,
  MessageCreatedPayload,
  messageCreatedPublications,
  outboundStatusAtSend,
} from './message-created';
import {
  DEFAULT_HISTORY_LIMIT,
  MessageDirection,
  MessageHistoryDto,
  MessageHistoryQueryDto,
  MessageItemDto,
  MessageSentDto,
  MessageStatus,
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
  recipient_kind: RecipientKind;
  group_id: string | null;
  sender_contact_id: string | null;
  type: MessageType;
  content: string;
  status: MessageStatus;
  delivered_at: Date | null;
  read_at: Date | null;
  waiting_recipients: number;
  created_at: Date;
  position_at: string;
}

/** Which halves of a thread to read: what the user sent, and what one other user sent to them. */
interface ThreadScope {
  /** The user's own messages to this contact or group, or null for none (a member's view of a group). */
  outbound: { kind: RecipientKind; recipientId: string } | null;
  /** Messages of this sender that reached the user, or null for none (an unlinked contact, the owner's view of a group). */
  inbound: { senderId: string; kind: RecipientKind; groupId: string | null; senderContactId: string | null } | null;
}

/**
 * An item of a thread. What another person sent is marked with the reader's
 * contact for them, never with their user id. Receipts are the stored ones:
 * inbound, the reader's own; outbound, the least advanced over the linked
 * recipients (`read` once all of them read it) with the latest times.
 */
function toItem(row: ThreadRow): MessageItemDto {
  return {
    id: row.id,
    direction: row.direction,
    sender_contact_id: row.sender_contact_id,
    recipient_id: row.recipient_id,
    recipient_kind: row.recipient_kind,
    group_id: row.group_id,
    type: row.type,
    content: row.content,
    status: row.status,
    delivered_at: row.delivered_at?.toISOString() ?? null,
    read_at: row.read_at?.toISOString() ?? null,
    waiting_recipients: row.waiting_recipients,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * The sender's view of a message's receipts (`m` is the message), as one row:
 * `waiting` while no recipient is on the service; else the least advanced
 * state over the linked recipients, with the latest delivery and read times.
 */
export const OUTBOUND_RECEIPTS_SQL = `SELECT
    CASE WHEN count(r.recipient_user_id) = 0 THEN 'waiting'
         WHEN bool_and(r.read_at IS NOT NULL) FILTER (WHERE r.recipient_user_id IS NOT NULL) THEN 'read'
         WHEN bool_and(r.delivered_at IS NOT NULL) FILTER (WHERE r.recipient_user_id IS NOT NULL) THEN 'delivered'
         ELSE 'sent' END AS status,
    max(r.delivered_at) AS delivered_at, max(r.read_at) AS read_at,
    (count(*) - count(r.recipient_user_id))::int AS waiting_recipients
  FROM message_recipients r WHERE r.message_id = m.id`;

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
      const status = outboundStatusAtSend(created.recipient_user_ids);
      return { status: 201, body: { id: created.message_id, status, created_at: created.created_at } satisfies MessageSentDto };
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
    const rows = await this.thread(userId, await this.scopeOf(userId, query.with), limit + 1, before);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      messages: page.map(toItem),
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
    return (await this.thread(userId, await this.scopeOf(userId, contactId), bounded, null)).map(toItem);
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
    const { kind, recipients, groupName } = await this.resolveRecipient(manager, userId, request.recipient_id);
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
      if (!group || !(group.member || (await this.reached(userId, withId)))) throw unknownRecipient(withId);
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

  /** Whether a message sent to this group reached the user (a former member keeps what they received). */
  private async reached(userId: string, groupId: string): Promise<boolean> {
    const rows: unknown[] = await this.messages.query(
      `SELECT 1 FROM messages m JOIN message_recipients r ON r.message_id = m.id
        WHERE m.recipient_id = $2 AND m.recipient_kind = 'group' AND r.recipient_user_id = $1 LIMIT 1`,
      [userId, groupId],
    );
    return rows.length > 0;
  }

  /** A thread, newest first, strictly older than `before` when given. */
  private async thread(userId: string, scope: ThreadScope, take: number, before: MessagePosition | null): Promise<ThreadRow[]> {
    const older = `($5::timestamptz IS NULL OR (m.created_at, m.id) < ($5::timestamptz, $6::text))`;
    const columns = `m.id, m.recipient_kind, CASE WHEN m.recipient_kind = 'group' THEN m.recipient_id END AS group_id,
      m.type, m.content, m.created_at, ${positionAtSql('m.created_at')} AS position_at`;
    return this.messages.query<ThreadRow[]>(
      `SELECT * FROM (
         (SELECT ${columns}, 'outbound'::text AS direction, m.recipient_id, NULL::text AS sender_contact_id,
                 s.status, s.delivered_at, s.read_at, s.waiting_recipients
            FROM messages m
            CROSS JOIN LATERAL (${OUTBOUND_RECEIPTS_SQL}) s
           WHERE $2::text IS NOT NULL AND m.sender_id = $1 AND m.recipient_kind = $2 AND m.recipient_id = $3 AND ${older}
           ORDER BY m.created_at DESC, m.id DESC LIMIT $7)
         UNION ALL
         (SELECT ${columns}, 'inbound'::text AS direction, $1::text AS recipient_id,
                 COALESCE($10::text, ${contactForUserSql('$1', 'm.sender_id')}) AS sender_contact_id,
                 s.status, s.delivered_at, s.read_at, 0 AS waiting_recipients
            FROM messages m
            CROSS JOIN LATERAL (
              SELECT r.status, r.delivered_at, r.read_at FROM message_recipients r
               WHERE r.message_id = m.id AND r.recipient_user_id = $1
               ORDER BY r.read_at NULLS LAST, r.delivered_at NULLS LAST LIMIT 1) s
           WHERE $4::text IS NOT NULL AND m.sender_id = $4::text AND m.recipient_kind = $8
             AND ($9::text IS NULL OR m.recipient_id = $9::text) AND ${older}
           ORDER BY m.created_at DESC, m.id DESC LIMIT $7)
       ) thread
       ORDER BY created_at DESC, id DESC LIMIT $7`,
      [
        userId,
        scope.outbound?.kind ?? null,
        scope.outbound?.recipientId ?? null,
        scope.inbound?.senderId ?? null,
        before?.at ?? null,
        before?.id ?? null,
        take,
        scope.inbound?.kind ?? null,
        scope.inbound?.groupId ?? null,
        scope.inbound?.senderContactId ?? null,
      ],
    );
  }
}
