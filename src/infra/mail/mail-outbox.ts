import { Injectable } from '@nestjs/common';
import { InjectEntityManager } from '@nestjs/typeorm';
import { EntityManager } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { newId } from '../../common/ids';
import { JobOutbox } from '../queue/job-outbox';
import { QUEUES } from '../queue/queues';

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
    await this.jobs.record(manager, { queue: QUEUES.mail, name: MAIL_JOB.name, data: { mailId: id }, id, opts: MAIL_JOB.opts });
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
