import { Injectable, Logger } from '@nestjs/common';
import { ContactSend, ContactSent, MessagesRepository } from './messages.repository';

/** Most sends one statement writes; more wait for the next. */
export const MAX_SENDS_PER_STATEMENT = 100;

interface PendingSend {
  send: ContactSend;
  settle: (sent: ContactSent | null) => void;
  fail: (error: unknown) => void;
}

/** Two sends that would take the same `Idempotency-Key` of one sender: one statement may take it only once. */
const keyOf = (send: ContactSend): string | undefined =>
  send.idempotency && `${send.senderId} ${send.idempotency.scope} ${send.idempotency.key}`;

/**
 * Messages to contacts, written as a group commit: the sends asked for in one
 * turn of the event loop, or while a statement runs, are written together by
 * one statement (`MessagesRepository.sendToContactMany`), so under load each
 * send no longer pays for a statement and a commit of its own; an idle send
 * waits for nothing but its own turn, and is written alone by the one-send
 * statement. Each send still commits before it is answered.
 *
 * If a statement of several sends fails (one send's row refused, a deadlock
 * with another instance), each of its sends is written again alone, so one
 * bad send never fails the others, and each gets its own answer or error.
 */
@Injectable()
export class ContactSends {
  private readonly logger = new Logger(ContactSends.name);
  private pending: PendingSend[] = [];
  private flushing = false;

  constructor(private readonly messages: MessagesRepository) {}

  /** Writes one send (with those around it): what it stored, or null when it wrote nothing (see `sendToContact`). */
  send(send: ContactSend): Promise<ContactSent | null> {
    return new Promise((settle, fail) => {
      if (this.pending.length === 0 && !this.flushing) setImmediate(() => void this.flush());
      this.pending.push({ send, settle, fail });
    });
  }

  /** One statement at a time: what arrives while it runs waits for the next, so batches grow with the load. */
  private async flush(): Promise<void> {
    this.flushing = true;
    const batch = this.takeBatch();
    try {
      await this.write(batch);
    } finally {
      this.flushing = false;
      if (this.pending.length > 0) setImmediate(() => void this.flush());
    }
  }

  /** Up to MAX_SENDS_PER_STATEMENT pending sends, oldest first; a second send with a key already in the batch waits. */
  private takeBatch(): PendingSend[] {
    const batch: PendingSend[] = [];
    const waiting: PendingSend[] = [];
    const keys = new Set<string>();
    for (const pending of this.pending) {
      const key = keyOf(pending.send);
      if (batch.length >= MAX_SENDS_PER_STATEMENT || (key !== undefined && keys.has(key))) {
        waiting.push(pending);
        continue;
      }
      if (key !== undefined) keys.add(key);
      batch.push(pending);
    }
    this.pending = waiting;
    return batch;
  }

  private async write(batch: PendingSend[]): Promise<void> {
    if (batch.length === 1) return this.writeAlone(batch[0]);
    let results: Array<ContactSent | null>;
    try {
      results = await this.messages.sendToContactMany(batch.map((pending) => pending.send));
    } catch (error) {
      this.logger.warn({ err: error, sends: batch.length }, 'a batch of sends failed; writing each alone');
      await Promise.all(batch.map((pending) => this.writeAlone(pending)));
      return;
    }
    batch.forEach((pending, i) => pending.settle(results[i]));
  }

  private async writeAlone(pending: PendingSend): Promise<void> {
    try {
      pending.settle(await this.messages.sendToContact(pending.send));
    } catch (error) {
      pending.fail(error);
    }
  }
}
