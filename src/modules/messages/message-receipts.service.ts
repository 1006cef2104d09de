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
/** Most deliveries one statement marks; more wait for the next. */
const MAX_DELIVERIES_PER_STATEMENT = 500;

interface PendingDelivery {
  recipientUserId: string;
  messageId: string;
  settle: (receipt: Receipt | null) => void;
  fail: (error: unknown) => void;
}

@Injectable()
export class MessageReceipts {
  /** Deliveries waiting for the next statement (this turn of the event loop, or while one runs). */
  private pending: PendingDelivery[] = [];
  private flushing = false;

  constructor(private readonly messages: MessagesRepository) {}

  /**
   * Marks a message delivered to a recipient user; the receipt, or null when
   * it was already delivered (or is not theirs). The deliveries asked for in
   * one turn of the event loop (a burst of messages reaching this instance's
   * sockets) are marked by one statement, not one each.
   */
  markDelivered(recipientUserId: string, messageId: string): Promise<Receipt | null> {
    return new Promise((settle, fail) => {
      if (this.pending.length === 0 && !this.flushing) setImmediate(() => void this.flush());
      this.pending.push({ recipientUserId, messageId, settle, fail });
    });
  }

  /**
   * One statement at a time: what arrives while it runs waits for the next,
   * so under load the batches grow (as a group commit does) and idle, a
   * delivery waits for nothing but its own turn of the event loop.
   */
  private async flush(): Promise<void> {
    this.flushing = true;
    const batch = this.pending.splice(0, MAX_DELIVERIES_PER_STATEMENT);
    try {
      await this.mark(batch);
    } finally {
      this.flushing = false;
      if (this.pending.length > 0) setImmediate(() => void this.flush());
    }
  }

  private async mark(batch: PendingDelivery[]): Promise<void> {
    try {
      const receipts = new Map<string, Receipt>();
      for (const { recipient_user_id: userId, ...receipt } of await this.messages.markDeliveredMany(batch)) {
        receipts.set(`${userId} ${receipt.message_id}`, receipt);
      }
      for (const delivery of batch) {
        const key = `${delivery.recipientUserId} ${delivery.messageId}`;
        // The same delivery asked twice in one batch: the first asker reports it, as with two statements.
        delivery.settle(receipts.get(key) ?? null);
        receipts.delete(key);
      }
    } catch (error) {
      for (const delivery of batch) delivery.fail(error);
    }
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
