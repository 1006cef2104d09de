import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Job } from 'bullmq';
import { createTransport, Transporter } from 'nodemailer';
import { DataSource } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { QUEUES, STALLED_CHECK_MS } from '../queue/queues';

const FROM = 'Service <no-reply@service.invalid>';

/** Delivers outbox mail: SMTP when `SMTP_URL` is set, otherwise a log line (links redacted in production). */
@Processor(QUEUES.mail, { stalledInterval: STALLED_CHECK_MS })
export class MailProcessor extends WorkerHost {
  private readonly logger = new Logger('Mail');
  private readonly transport: Transporter | null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly secretBox: SecretBox,
  ) {
    super();
    this.transport = config.smtpUrl ? createTransport(config.smtpUrl) : null;
  }

  async process(job: Job<{ mailId: string }>): Promise<{ status: string }> {
    const [mail]: Array<{ recipient: string; subject: string; body_encrypted: string; status: string }> = await this.dataSource.query(
      `SELECT recipient, subject, body_encrypted, status FROM mail_outbox WHERE id = $1`,
      [job.data.mailId],
    );
    if (!mail || mail.status !== 'pending') return { status: mail?.status ?? 'missing' };
    const text = this.secretBox.open(mail.body_encrypted);
    try {
      if (this.transport) {
        await this.transport.sendMail({ from: FROM, to: mail.recipient, subject: mail.subject, text });
      } else {
        const shown = this.config.nodeEnv === 'production' ? text.replace(/https?:\/\/\S+/g, '[link redacted]') : text;
        this.logger.log({ to: mail.recipient, subject: mail.subject, body: shown }, 'mail (no SMTP_URL configured)');
      }
    } catch (error) {
      await this.dataSource.query(`UPDATE mail_outbox SET attempts = attempts + 1, last_error = $2 WHERE id = $1`, [
        job.data.mailId,
        (error as Error).message.slice(0, 500),
      ]);
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) {
        await this.dataSource.query(`UPDATE mail_outbox SET status = 'failed' WHERE id = $1`, [job.data.mailId]);
      }
      throw error;
    }
    const status = this.transport ? 'sent' : 'logged';
    await this.dataSource.query(`UPDATE mail_outbox SET status = $2, attempts = attempts + 1, sent_at = now() WHERE id = $1`, [
      job.data.mailId,
      status,
    ]);
    return { status };
  }
}
