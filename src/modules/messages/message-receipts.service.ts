import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { contactForUserSql } from '../contacts/contact-links';

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

/**
 * Delivery and read receipts of received messages. Each transition is an
 * `UPDATE … WHERE <column> IS NULL RETURNING`, so when several gateway
 * instances hold sockets of the same recipient only one of them reports it.
 * Receipts exist only once the recipient has added the sender back (the
 * recipient has a contact linked to the sender): before that, a receipt would
 * tell the sender that the address has an account and when it is online.
 */
@Injectable()
export class MessageReceipts {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Marks a message delivered to a recipient user; the receipt, or null when it was already delivered (or is not theirs). */
  async markDelivered(recipientUserId: string, messageId: string): Promise<Receipt | null> {
    const [rows]: [Array<{ sender_id: string; contact_id: string; delivered_at: Date }>, number] = await this.dataSource.query(
      `UPDATE message_recipients r SET delivered_at = now(), status = 'delivered'
         FROM messages m
        WHERE m.id = r.message_id AND r.message_id = $1 AND r.recipient_user_id = $2 AND r.delivered_at IS NULL
          AND ${contactForUserSql('$2', 'm.sender_id')} IS NOT NULL
        RETURNING m.sender_id, r.contact_id, r.delivered_at`,
      [messageId, recipientUserId],
    );
    return rows.length > 0
      ? { message_id: messageId, sender_id: rows[0].sender_id, contact_id: rows[0].contact_id, at: rows[0].delivered_at.toISOString() }
      : null;
  }

  /** Marks messages read by a recipient user (and delivered, if not yet); receipts of those that changed. */
  async markRead(recipientUserId: string, messageIds: string[]): Promise<Receipt[]> {
    const [rows]: [Array<{ message_id: string; sender_id: string; contact_id: string; read_at: Date }>, number] =
      await this.dataSource.query(
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

  /**
   * Messages other users sent to this user after `since` (exclusive), oldest
   * first, for a reconnecting client; at most `limit`. One recipient row per
   * user and message: an owner has one contact per address.
   */
  async receivedSince(recipientUserId: string, since: Date, limit: number): Promise<UndeliveredMessage[]> {
    const rows: Array<
      Omit<UndeliveredMessage, 'created_at' | 'group_id' | 'group_name'> & {
        created_at: Date;
        group_id: string | null;
        group_name: string | null;
      }
    > = await this.dataSource.query(
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
