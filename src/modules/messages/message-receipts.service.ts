import { Injectable } from '@nestjs/common';
import { MessagesRepository, Receipt, UndeliveredMessage } from './messages.repository';

export type { Receipt, UndeliveredMessage } from './messages.repository';

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
  constructor(private readonly messages: MessagesRepository) {}

  /** Marks a message delivered to a recipient user; the receipt, or null when it was already delivered (or is not theirs). */
  markDelivered(recipientUserId: string, messageId: string): Promise<Receipt | null> {
    return this.messages.markDelivered(recipientUserId, messageId);
  }

  /** Marks messages read by a recipient user (and delivered, if not yet); receipts of those that changed. */
  markRead(recipientUserId: string, messageIds: string[]): Promise<Receipt[]> {
    return this.messages.markRead(recipientUserId, messageIds);
  }

  /**
   * Messages other users sent to this user after `since` (exclusive), oldest
   * first, for a reconnecting client; at most `limit`. One recipient row per
   * user and message: an owner has one contact per address.
   */
  receivedSince(recipientUserId: string, since: Date, limit: number): Promise<UndeliveredMessage[]> {
    return this.messages.receivedSince(recipientUserId, since, limit);
  }
}
