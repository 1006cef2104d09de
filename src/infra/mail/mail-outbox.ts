import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { newId } from '../../common/ids';
import { JobOutbox } from '../queue/job-outbox';
import { QUEUES } from '../queue/queues';
import { MailOutboxRepository } from './mail-outbox.repository';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
}

/** One `send` job per mail, job id = mail id; eight attempts over about eight minutes. */
export const MAIL_JOB = { name: 'send', opts: { attempts: 8, backoff: { type: 'exponential', delay: 2000 } } } as const;

/**
 * Mail is written to the outbox in the transaction of the change that causes
 * it (an account and its verification mail commit together or not at all).
 * The body is sealed because it may carry single-use links. The worker sends
 * it: its `mail` job is recorded in the same transaction (job outbox), and the
 * processor delivers through SMTP_URL or, without one, logs it.
 */
@Injectable()
export class MailOutbox {
  constructor(
    private readonly secretBox: SecretBox,
    private readonly jobs: JobOutbox,
    private readonly mails: MailOutboxRepository,
  ) {}

  async enqueue(manager: EntityManager, mail: OutgoingMail): Promise<string> {
    const id = newId('task');
    await this.mails.insert(manager, { id, recipient: mail.to, subject: mail.subject, bodyEncrypted: this.secretBox.seal(mail.text) });
    await this.jobs.record(manager, { queue: QUEUES.mail, name: MAIL_JOB.name, data: { mailId: id }, id, opts: MAIL_JOB.opts });
    return id;
  }

  /** Drops delivered or logged mail after 30 days (retention job). */
  purgeDelivered(): Promise<number> {
    return this.mails.purgeDelivered();
  }
}
