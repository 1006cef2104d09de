import { Injectable } from '@nestjs/common';
import { StatementBatch } from '../../infra/database/statement-batch';
import { MessagesRepository, Receipt, UndeliveredMessage } from './messages.repository';

export type { Receipt, UndeliveredMessage } from './messages.repository';

/** Most deliveries one statement marks; more wait for the next. */
const MAX_DELIVERIES_PER_STATEMENT = 500;

interface Delivery {
  recipientUserId: string;
  messageId: string;
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
  /** Deliveries waiting for the next statement (this turn of the event loop, or while one runs). */
  private readonly deliveries = new StatementBatch<Delivery, Receipt | null>((batch) => this.mark(batch), MAX_DELIVERIES_PER_STATEMENT);

  constructor(private readonly messages: MessagesRepository) {}

  /**
   * Marks a message delivered to a recipient user; the receipt, or null when
   * it was already delivered (or is not theirs). The deliveries asked for in
   * one turn of the event loop (a burst of messages reaching this instance's
   * sockets) are marked by one statement, not one each.
   */
  markDelivered(recipientUserId: string, messageId: string): Promise<Receipt | null> {
    return this.deliveries.add({ recipientUserId, messageId });
  }

  private async mark(batch: Delivery[]): Promise<Array<Receipt | null>> {
    const receipts = new Map<string, Receipt>();
    for (const { recipient_user_id: userId, ...receipt } of await this.messages.markDeliveredMany(batch)) {
      receipts.set(`${userId} ${receipt.message_id}`, receipt);
    }
    return batch.map((delivery) => {
      const key = `${delivery.recipientUserId} ${delivery.messageId}`;
      // The same delivery asked twice in one batch: the first asker reports it, as with two statements.
      const receipt = receipts.get(key) ?? null;
      receipts.delete(key);
      return receipt;
    });
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
