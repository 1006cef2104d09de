import { Injectable } from '@nestjs/common';
import { InjectEntityManager } from '@nestjs/typeorm';
import { EntityManager } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { newId } from '../../common/ids';
import { DomainEvents } from '../../modules/events/domain-events';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
}

export const MAIL_QUEUED_EVENT = 'mail.queued';

/**
 * Mail is written to the outbox in the transaction of the change that causes
 * it (an account and its verification mail commit together or not at all).
 * The body is sealed because it may carry single-use links. The worker sends
 * it: the outbox event enqueues a `mail` job, whose processor delivers through
 * SMTP_URL or, without one, logs it.
 */
@Injectable()
export class MailOutbox {
  constructor(
    private readonly secretBox: SecretBox,
    private readonly events: DomainEvents,
    @InjectEntityManager() private readonly manager: EntityManager,
  ) {}

  async enqueue(manager: EntityManager, mail: OutgoingMail): Promise<string> {
    const id = newId('task');
    await manager.query(`INSERT INTO mail_outbox (id, recipient, subject, body_encrypted) VALUES ($1, $2, $3, $4)`, [
      id,
      mail.to,
      mail.subject,
      this.secretBox.seal(mail.text),
    ]);
    await this.events.record(manager, { type: MAIL_QUEUED_EVENT, payload: { mail_id: id } });
    return id;
  }

  /** Drops delivered or logged mail after 30 days (retention job). */
  async purgeDelivered(): Promise<number> {
    const [, count]: [unknown, number] = await this.manager.query(
      `DELETE FROM mail_outbox WHERE status IN ('sent', 'logged', 'failed') AND created_at < now() - interval '30 days'`,
    );
    return count;
  }
}
