import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import { IdempotencyKeysRepository } from '../../common/idempotency/idempotency-keys.repository';
import { contactForUserSql, linkedUserSql } from '../contacts/contact-links';
import { recordInteractionSetSql } from '../contacts/relationship-score';
import { EventsRepository } from '../events/events.repository';
import { MessageDirection, MessageItemDto, MessageStatus } from './dto/message.dto';
import { MessageType, RecipientKind } from './entities/message.entity';
import { MessagePosition, positionAtSql } from './message-cursor';

/** A message about to be stored, with one recipient row per contact. */
export interface NewMessage {
  id: string;
  senderId: string;
  recipientKind: RecipientKind;
  recipientId: string;
  type: MessageType;
  content: string;
  recipients: Array<{ contactId: string; linkedUserId: string | null }>;
}

/** A message to one contact, sent in one statement (`sendToContact`). */
export interface ContactSend {
  id: string;
  senderId: string;
  contactId: string;
  type: MessageType;
  content: string;
  /** The `Idempotency-Key`, its scope and the request's hash; absent without a key. */
  idempotency?: { key: string; scope: string; requestHash: string };
  /** The `message.created` event: its id, type and hold (the durable copy's delay). */
  event: { id: string; type: string; delayMs: number };
}

/** What `sendToContact` stored: when, and who the message reaches. */
export interface ContactSent {
  createdAt: string;
  /** The service user the contact is linked to, or null (the pending-contact rule). */
  linkedUserId: string | null;
  /** That user's contact for the sender, or null when they have not added the sender. */
  senderContactId: string | null;
}

/** `created_at` of rows written by the statement, as `Date.prototype.toISOString` writes it (milliseconds, truncated as pg's parser does). */
const isoSql = (at: string): string => `to_char(${at} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const NOW_ISO = isoSql('now()');

const CLAIM_KEY = IdempotencyKeysRepository.claimWithResponseSql({
  name: 'claim',
  source: 'keyed',
  ownerId: '$2',
  scope: '$8',
  key: '$6',
  requestHash: '$7',
  status: '201',
  body: `jsonb_build_object('id', $1::text, 'status', CASE WHEN keyed.linked_user_id IS NULL THEN 'waiting' ELSE 'sent' END,
                            'created_at', keyed.created_at)`,
});

const MESSAGE_CREATED_EVENT = EventsRepository.heldInsertSql({
  name: 'recorded_event',
  source: 'told',
  id: '$9::text',
  type: '$11::text',
  delayMs: '$10::int',
  payload: `jsonb_build_object(
      'message_id', $1::text, 'sender_id', $2::text, 'recipient_id', told.id, 'recipient_kind', 'contact',
      'recipient_user_ids', CASE WHEN told.linked_user_id IS NULL THEN '[]'::jsonb ELSE jsonb_build_array(told.linked_user_id) END,
      'sender_contact_ids', CASE WHEN told.sender_contact_id IS NULL THEN '{}'::jsonb
                                 ELSE jsonb_build_object(told.linked_user_id, told.sender_contact_id) END,
      'contact_ids', jsonb_build_array(told.id), 'type', $4::text, 'content', $5::text, 'created_at', told.created_at)`,
});

/**
 * A message to one of the sender's contacts as ONE statement: the recipient
 * check, the `Idempotency-Key` (taken with its response), the message and its
 * recipient row, the contact's interaction weight and the held
 * `message.created` event (its wake-up follows the commit, throttled: DomainEvents.wakeAfterHold). No row comes back when the
 * contact is not the sender's or the key is already taken; nothing is then
 * written, and the caller takes the general path, which answers those cases.
 */
export const SEND_TO_CONTACT_SQL = `WITH recipient AS (
    SELECT c.id, ${linkedUserSql('c')} AS linked_user_id, ${NOW_ISO} AS created_at
      FROM contacts c WHERE c.id = $3::text AND c.user_id = $2::text
  ), keyed AS (
    SELECT * FROM recipient WHERE $6::text IS NOT NULL
  ), ${CLAIM_KEY}, go AS (
    SELECT * FROM recipient WHERE $6::text IS NULL OR EXISTS (SELECT 1 FROM claim)
  ), message AS (
    INSERT INTO messages (id, sender_id, recipient_kind, recipient_id, type, content, status)
    SELECT $1::text, $2::text, 'contact', go.id, $4::text, $5::text, 'sent' FROM go
  ), recipients AS (
    INSERT INTO message_recipients (message_id, contact_id, recipient_user_id) SELECT $1::text, go.id, go.linked_user_id FROM go
  ), interaction AS (
    UPDATE contacts c SET ${recordInteractionSetSql('c', 'now()')} FROM go WHERE c.id = go.id AND c.user_id = $2::text
  ), told AS (
    SELECT go.*, ${contactForUserSql('go.linked_user_id', '$2::text')} AS sender_contact_id FROM go
  ), ${MESSAGE_CREATED_EVENT}
  SELECT told.created_at, told.linked_user_id, told.sender_contact_id FROM told`;

/**
 * `SEND_TO_CONTACT_SQL` for many sends at once (`sendToContactMany`): the
 * sends come as parallel arrays, one element each, and every part is the
 * same as in the one-send statement, per row. Two sends to one contact in a
 * batch add two interactions to its weight. The sends of one batch share a
 * transaction, and so `now()`: each is stamped a microsecond after the one
 * before it, so that a thread (ordered by `created_at`, then the random id)
 * keeps the order in which they were sent. The contacts are locked in id
 * order before they are updated, so two batches that share contacts (two api
 * instances) wait for each other instead of deadlocking. A row comes back
 * for each send that was written, with its id; the others wrote nothing.
 */
const SEND_TO_CONTACTS_SQL = `WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                         $9::text[], $10::int[], $11::text[])
      WITH ORDINALITY AS i(id, sender_id, contact_id, type, content, key, request_hash, scope, event_id, delay_ms, event_type, ord)
  ), stamped AS (
    SELECT i.*, now() + (i.ord - 1) * interval '1 microsecond' AS at FROM input i
  ), recipient AS (
    SELECT i.*, ${linkedUserSql('c')} AS linked_user_id, ${isoSql('i.at')} AS created_at
      FROM stamped i JOIN contacts c ON c.id = i.contact_id AND c.user_id = i.sender_id
  ), keyed AS (
    SELECT * FROM recipient WHERE key IS NOT NULL ORDER BY sender_id, key
  ), ${IdempotencyKeysRepository.claimWithResponseSql({
    name: 'claim',
    source: 'keyed',
    ownerId: 'keyed.sender_id',
    scope: 'keyed.scope',
    key: 'keyed.key',
    requestHash: 'keyed.request_hash',
    status: '201',
    body: `jsonb_build_object('id', keyed.id, 'status', CASE WHEN keyed.linked_user_id IS NULL THEN 'waiting' ELSE 'sent' END,
                              'created_at', keyed.created_at)`,
  })}, go AS (
    SELECT r.* FROM recipient r
     WHERE r.key IS NULL OR EXISTS (SELECT 1 FROM claim k WHERE k.owner_id = r.sender_id AND k.scope = r.scope AND k.key = r.key)
  ), message AS (
    INSERT INTO messages (id, sender_id, recipient_kind, recipient_id, type, content, status, created_at)
    SELECT go.id, go.sender_id, 'contact', go.contact_id, go.type, go.content, 'sent', go.at FROM go
  ), recipients AS (
    INSERT INTO message_recipients (message_id, contact_id, recipient_user_id) SELECT go.id, go.contact_id, go.linked_user_id FROM go
  ), sends_per_contact AS (
    SELECT contact_id, count(*) AS sends FROM go GROUP BY contact_id
  ), locked AS (
    SELECT c.id FROM contacts c JOIN sends_per_contact s ON s.contact_id = c.id ORDER BY c.id FOR NO KEY UPDATE OF c
  ), interaction AS (
    UPDATE contacts c SET ${recordInteractionSetSql('c', 'now()', 's.sends')}
      FROM sends_per_contact s JOIN locked l ON l.id = s.contact_id WHERE c.id = s.contact_id
  ), told AS (
    SELECT go.*, ${contactForUserSql('go.linked_user_id', 'go.sender_id')} AS sender_contact_id FROM go
  ), ${EventsRepository.heldInsertSql({
    name: 'recorded_event',
    source: 'told',
    id: 'told.event_id',
    type: 'told.event_type',
    delayMs: 'told.delay_ms',
    payload: `jsonb_build_object(
      'message_id', told.id, 'sender_id', told.sender_id, 'recipient_id', told.contact_id, 'recipient_kind', 'contact',
      'recipient_user_ids', CASE WHEN told.linked_user_id IS NULL THEN '[]'::jsonb ELSE jsonb_build_array(told.linked_user_id) END,
      'sender_contact_ids', CASE WHEN told.sender_contact_id IS NULL THEN '{}'::jsonb
                                 ELSE jsonb_build_object(told.linked_user_id, told.sender_contact_id) END,
      'contact_ids', jsonb_build_array(told.contact_id), 'type', told.type, 'content', told.content, 'created_at', told.created_at)`,
  })}
  SELECT told.id, told.created_at, told.linked_user_id, told.sender_contact_id FROM told`;

/** Which halves of a thread to read: what the user sent, and what one other user sent to them. */
export interface ThreadScope {
  /** The user's own messages to this contact or group, or null for none (a member's view of a group). */
  outbound: { kind: RecipientKind; recipientId: string } | null;
  /** Messages of this sender that reached the user, or null for none (an unlinked contact, the owner's view of a group). */
  inbound: { senderId: string; kind: RecipientKind; groupId: string | null; senderContactId: string | null } | null;
}

/** An item of a thread with its keyset position (`created_at` at microsecond precision). */
export interface ThreadMessage {
  item: MessageItemDto;
  positionAt: string;
}

export interface Receipt {
  message_id: string;
  /** Who is told: the sender's user id (their channel), internal. */
  sender_id: string;
  /** How the sender knows the recipient: the sender's contact the message went to. */
  contact_id: string;
  at: string;
}

export interface UndeliveredMessage {
  id: string;
  /** The recipient's contact for the sender, or null when they have not added the sender. */
  sender_contact_id: string | null;
  recipient_kind: string;
  /** For a group message, the group (its owner's id) and its current name; absent otherwise. */
  group_id?: string;
  group_name?: string | null;
  /** The recipient's own receipt: `sent`, `delivered` or `read`. */
  status: string;
  type: string;
  content: string;
  created_at: string;
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

type SentRow = Record<string, unknown> & { created_at: Date; recipients: Array<Record<string, string | null>> };
type ReceivedRow = Record<string, unknown> & { created_at: Date; delivered_at: Date | null; read_at: Date | null };
type UndeliveredRow = Omit<UndeliveredMessage, 'created_at' | 'group_id' | 'group_name'> & {
  created_at: Date;
  group_id: string | null;
  group_name: string | null;
};

/**
 * An item of a thread. What another person sent is marked with the reader's
 * contact for them, never with their user id. Receipts are the stored ones:
 * inbound, the reader's own; outbound, the least advanced over the linked
 * recipients (`read` once all of them read it) with the latest times.
 */
function toThreadMessage(row: ThreadRow): ThreadMessage {
  return {
    item: {
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
    },
    positionAt: row.position_at,
  };
}

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

/**
 * The sender's view of a message's receipts (`m` is the message), as one row:
 * `waiting` while no recipient is on the service; else the least advanced
 * state over the linked recipients, with the latest delivery and read times.
 */
const OUTBOUND_RECEIPTS_SQL = `SELECT
    CASE WHEN count(r.recipient_user_id) = 0 THEN 'waiting'
         WHEN bool_and(r.read_at IS NOT NULL) FILTER (WHERE r.recipient_user_id IS NOT NULL) THEN 'read'
         WHEN bool_and(r.delivered_at IS NOT NULL) FILTER (WHERE r.recipient_user_id IS NOT NULL) THEN 'delivered'
         ELSE 'sent' END AS status,
    max(r.delivered_at) AS delivered_at, max(r.read_at) AS read_at,
    (count(*) - count(r.recipient_user_id))::int AS waiting_recipients
  FROM message_recipients r WHERE r.message_id = m.id`;

const THREAD_OLDER = `($5::timestamptz IS NULL OR (m.created_at, m.id) < ($5::timestamptz, $6::text))`;
const THREAD_COLUMNS = `m.id, m.recipient_kind, CASE WHEN m.recipient_kind = 'group' THEN m.recipient_id END AS group_id,
      m.type, m.content, m.created_at, ${positionAtSql('m.created_at')} AS position_at`;
/**
 * A page of a thread, newest first: what the user sent to the scope's recipient and what the scope's sender sent
 * to the user, each half limited, then merged (exported for the HTTP bench's bare baseline, which runs the same SQL).
 */
export const THREAD_SQL = `SELECT * FROM (
         (SELECT ${THREAD_COLUMNS}, 'outbound'::text AS direction, m.recipient_id, NULL::text AS sender_contact_id,
                 s.status, s.delivered_at, s.read_at, s.waiting_recipients
            FROM messages m
            CROSS JOIN LATERAL (${OUTBOUND_RECEIPTS_SQL}) s
           WHERE $2::text IS NOT NULL AND m.sender_id = $1 AND m.recipient_kind = $2 AND m.recipient_id = $3 AND ${THREAD_OLDER}
           ORDER BY m.created_at DESC, m.id DESC LIMIT $7)
         UNION ALL
         (SELECT ${THREAD_COLUMNS}, 'inbound'::text AS direction, $1::text AS recipient_id,
                 COALESCE($10::text, ${contactForUserSql('$1', 'm.sender_id')}) AS sender_contact_id,
                 s.status, s.delivered_at, s.read_at, 0 AS waiting_recipients
            FROM messages m
            CROSS JOIN LATERAL (
              SELECT r.status, r.delivered_at, r.read_at FROM message_recipients r
               WHERE r.message_id = m.id AND r.recipient_user_id = $1
               ORDER BY r.read_at NULLS LAST, r.delivered_at NULLS LAST LIMIT 1) s
           WHERE $4::text IS NOT NULL AND m.sender_id = $4::text AND m.recipient_kind = $8
             AND ($9::text IS NULL OR m.recipient_id = $9::text) AND ${THREAD_OLDER}
           ORDER BY m.created_at DESC, m.id DESC LIMIT $7)
       ) thread
       ORDER BY created_at DESC, id DESC LIMIT $7`;

/**
 * The `messages` and `message_recipients` tables: a message and its recipient
 * rows are written together (one statement on the send path), so one
 * repository owns both.
 */
@Injectable()
export class MessagesRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** The message and its recipient rows in one statement; the message's `created_at`. */
  async insertWithRecipients(tx: Tx, message: NewMessage): Promise<Date> {
    const [{ created_at: createdAt }] = await this.rows<{ created_at: Date }>(
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
        message.id,
        message.senderId,
        message.recipientKind,
        message.recipientId,
        message.type,
        message.content,
        message.recipients.map((r) => r.contactId),
        message.recipients.map((r) => r.linkedUserId),
      ],
      tx,
    );
    return createdAt;
  }

  /**
   * The send to a contact in one prepared statement (SEND_TO_CONTACT_SQL): one
   * round trip, parsed once per connection. Null when nothing was written
   * (not the sender's contact, or the key already taken).
   */
  async sendToContact(send: ContactSend): Promise<ContactSent | null> {
    const rows = await this.prepared<{ created_at: string; linked_user_id: string | null; sender_contact_id: string | null }>(
      'messages.send_to_contact',
      SEND_TO_CONTACT_SQL,
      [
        send.id,
        send.senderId,
        send.contactId,
        send.type,
        send.content,
        send.idempotency?.key ?? null,
        send.idempotency?.requestHash ?? null,
        send.idempotency?.scope ?? null,
        send.event.id,
        send.event.delayMs,
        send.event.type,
      ],
    );
    const [row] = rows;
    return row ? { createdAt: row.created_at, linkedUserId: row.linked_user_id, senderContactId: row.sender_contact_id } : null;
  }

  /**
   * Many sends to contacts in one statement (SEND_TO_CONTACTS_SQL): for each
   * send, in order, what it stored, or null when it wrote nothing (as
   * `sendToContact`). The sends must not share an `Idempotency-Key` of one
   * sender (one statement cannot take a key twice).
   */
  async sendToContactMany(sends: ContactSend[]): Promise<Array<ContactSent | null>> {
    const column = <T>(pick: (send: ContactSend) => T): T[] => sends.map(pick);
    const rows = await this.prepared<{ id: string; created_at: string; linked_user_id: string | null; sender_contact_id: string | null }>(
      'messages.send_to_contacts',
      SEND_TO_CONTACTS_SQL,
      [
        column((s) => s.id),
        column((s) => s.senderId),
        column((s) => s.contactId),
        column((s) => s.type),
        column((s) => s.content),
        column((s) => s.idempotency?.key ?? null),
        column((s) => s.idempotency?.requestHash ?? null),
        column((s) => s.idempotency?.scope ?? null),
        column((s) => s.event.id),
        column((s) => s.event.delayMs),
        column((s) => s.event.type),
      ],
    );
    const stored = new Map(rows.map((row) => [row.id, row]));
    return sends.map((send) => {
      const row = stored.get(send.id);
      return row ? { createdAt: row.created_at, linkedUserId: row.linked_user_id, senderContactId: row.sender_contact_id } : null;
    });
  }

  /** Whether a message sent to this group reached the user (a former member keeps what they received). */
  async groupMessageReached(userId: string, groupId: string): Promise<boolean> {
    const rows = await this.rows<unknown>(
      `SELECT 1 FROM messages m JOIN message_recipients r ON r.message_id = m.id
        WHERE m.recipient_id = $2 AND m.recipient_kind = 'group' AND r.recipient_user_id = $1 LIMIT 1`,
      [userId, groupId],
    );
    return rows.length > 0;
  }

  /** A thread, newest first, strictly older than `before` when given. */
  async thread(userId: string, scope: ThreadScope, take: number, before: MessagePosition | null): Promise<ThreadMessage[]> {
    const rows = await this.prepared<ThreadRow>('messages_thread', THREAD_SQL, [
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
    ]);
    return rows.map(toThreadMessage);
  }

  /** Messages the user sent, with their recipients, oldest first, as plain JSON (the personal data export). */
  async sentForExport(userId: string, tx: Tx): Promise<unknown[]> {
    const rows = await this.rows<SentRow>(
      `SELECT m.id, m.recipient_kind, m.recipient_id, m.type, m.content, m.status, m.created_at,
              COALESCE(json_agg(json_build_object(
                'contact_id', r.contact_id, 'status', r.status,
                'delivered_at', r.delivered_at, 'read_at', r.read_at) ORDER BY r.contact_id)
                FILTER (WHERE r.message_id IS NOT NULL), '[]') AS recipients
         FROM messages m LEFT JOIN message_recipients r ON r.message_id = m.id
        WHERE m.sender_id = $1
        GROUP BY m.id ORDER BY m.created_at, m.id`,
      [userId],
      tx,
    );
    return rows.map((row) => ({
      ...row,
      created_at: iso(row.created_at),
      recipients: row.recipients.map((r) => ({ ...r, delivered_at: iso(r.delivered_at), read_at: iso(r.read_at) })),
    }));
  }

  /** Messages linked users sent to the user, oldest first, senders as the user's contact ids (the personal data export). */
  async receivedForExport(userId: string, tx: Tx): Promise<unknown[]> {
    const rows = await this.rows<ReceivedRow>(
      `SELECT DISTINCT ON (m.created_at, m.id) m.id, ${contactForUserSql('$1', 'm.sender_id')} AS sender_contact_id,
              m.type, m.content, m.created_at, r.status, r.delivered_at, r.read_at
         FROM messages m JOIN message_recipients r ON r.message_id = m.id
        WHERE r.recipient_user_id = $1 AND m.sender_id <> $1
        ORDER BY m.created_at, m.id`,
      [userId],
      tx,
    );
    return rows.map((row) => ({
      ...row,
      created_at: iso(row.created_at),
      delivered_at: iso(row.delivered_at),
      read_at: iso(row.read_at),
    }));
  }

  /**
   * Hands a user who has just taken `address` as their verified email the
   * messages that waited for a contact with that address (the pending-contact
   * rule), inside the login transaction. Messages that already reached someone
   * stay theirs.
   */
  async claimPendingForAddress(tx: Tx, userId: string, address: string): Promise<void> {
    await this.execute(
      `UPDATE message_recipients r SET recipient_user_id = $2
         FROM contacts c
        WHERE c.id = r.contact_id AND r.recipient_user_id IS NULL AND r.recipient_erased_at IS NULL
          AND c.email IS NOT NULL AND lower(c.email) = lower($1) AND c.user_id <> $2`,
      [address, userId],
      tx,
    );
  }

  /**
   * Marks the copies that reached a user whose account is being erased (in the
   * erasure's transaction, before the user row goes): they stay with their
   * senders, but the pending-contact rule never hands them to a later account
   * of the same address. Answers how many.
   */
  async sealReceivedBy(tx: Tx, userId: string): Promise<number> {
    const { count } = await this.changed(
      `UPDATE message_recipients SET recipient_erased_at = now() WHERE recipient_user_id = $1 AND recipient_erased_at IS NULL`,
      [userId],
      tx,
    );
    return count;
  }

  /**
   * Marks messages delivered to recipient users, once each: `WHERE delivered_at
   * IS NULL … RETURNING`, so of several instances holding a recipient's
   * sockets only one reports a message. Only once the recipient has added the
   * sender back. Rows are locked in key order, so two instances marking
   * overlapping sets never deadlock. Answers the receipts of the rows that changed.
   */
  async markDeliveredMany(
    deliveries: Array<{ recipientUserId: string; messageId: string }>,
  ): Promise<Array<Receipt & { recipient_user_id: string }>> {
    const { rows } = await this.changed<{
      message_id: string;
      recipient_user_id: string;
      sender_id: string;
      contact_id: string;
      delivered_at: Date;
    }>(
      `WITH due AS (
         SELECT r.message_id, r.contact_id FROM message_recipients r
           JOIN unnest($1::text[], $2::text[]) AS d(message_id, user_id) ON r.message_id = d.message_id AND r.recipient_user_id = d.user_id
           JOIN messages m ON m.id = r.message_id
          WHERE r.delivered_at IS NULL AND ${contactForUserSql('d.user_id', 'm.sender_id')} IS NOT NULL
          ORDER BY r.message_id, r.contact_id
          FOR UPDATE OF r
       )
       UPDATE message_recipients r SET delivered_at = now(), status = 'delivered'
         FROM due, messages m
        WHERE r.message_id = due.message_id AND r.contact_id = due.contact_id AND m.id = r.message_id AND r.delivered_at IS NULL
        RETURNING r.message_id, r.recipient_user_id, m.sender_id, r.contact_id, r.delivered_at`,
      [deliveries.map((d) => d.messageId), deliveries.map((d) => d.recipientUserId)],
    );
    return rows.map((row) => ({
      message_id: row.message_id,
      recipient_user_id: row.recipient_user_id,
      sender_id: row.sender_id,
      contact_id: row.contact_id,
      at: row.delivered_at.toISOString(),
    }));
  }

  /** Marks messages read by a recipient user (and delivered, if not yet); one receipt per message that changed. */
  async markRead(recipientUserId: string, messageIds: string[]): Promise<Receipt[]> {
    const { rows } = await this.changed<{ message_id: string; sender_id: string; contact_id: string; read_at: Date }>(
      `UPDATE message_recipients r SET read_at = now(), delivered_at = COALESCE(r.delivered_at, now()), status = 'read'
         FROM messages m
        WHERE m.id = r.message_id AND r.message_id = ANY($1::text[]) AND r.recipient_user_id = $2 AND r.read_at IS NULL
          AND ${contactForUserSql('$2', 'm.sender_id')} IS NOT NULL
        RETURNING r.message_id, m.sender_id, r.contact_id, r.read_at`,
      [messageIds, recipientUserId],
    );
    const seen = new Map<string, Receipt>();
    for (const row of rows)
      seen.set(row.message_id, {
        message_id: row.message_id,
        sender_id: row.sender_id,
        contact_id: row.contact_id,
        at: row.read_at.toISOString(),
      });
    return [...seen.values()];
  }

  /** Messages other users sent to this user after `since` (exclusive), oldest first; at most `limit`. */
  async receivedSince(recipientUserId: string, since: Date, limit: number): Promise<UndeliveredMessage[]> {
    const rows = await this.rows<UndeliveredRow>(
      `SELECT m.id, ${contactForUserSql('$1', 'm.sender_id')} AS sender_contact_id, m.recipient_kind,
              CASE WHEN m.recipient_kind = 'group' THEN m.recipient_id END AS group_id, g.name AS group_name,
              r.status, m.type, m.content, m.created_at
         FROM message_recipients r
         JOIN messages m ON m.id = r.message_id
         LEFT JOIN groups g ON m.recipient_kind = 'group' AND g.id = m.recipient_id
        WHERE r.recipient_user_id = $1 AND m.created_at > $2 AND m.sender_id <> $1
        ORDER BY m.created_at, m.id
        LIMIT $3`,
      [recipientUserId, since, limit],
    );
    return rows.map(({ group_id: groupId, group_name: groupName, ...row }) => ({
      ...row,
      ...(groupId === null ? {} : { group_id: groupId, group_name: groupName }),
      created_at: row.created_at.toISOString(),
    }));
  }
}
