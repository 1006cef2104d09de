import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject, Logger } from '@nestjs/common';
import { Job } from 'bullmq';
import { createTransport, Transporter } from 'nodemailer';
import { SecretBox } from '../../common/crypto/secret-box';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { QUEUES, STALLED_CHECK_MS } from '../queue/queues';
import { MailOutboxRepository } from './mail-outbox.repository';

const FROM = 'Service <no-reply@service.invalid>';

/** Delivers outbox mail: SMTP when `SMTP_URL` is set, otherwise a log line (links redacted in production). */
@Processor(QUEUES.mail, { stalledInterval: STALLED_CHECK_MS })
export class MailProcessor extends WorkerHost {
  private readonly logger = new Logger('Mail');
  private readonly transport: Transporter | null;

  constructor(
    private readonly mails: MailOutboxRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly secretBox: SecretBox,
  ) {
    super();
    this.transport = config.smtpUrl ? createTransport(config.smtpUrl) : null;
  }

  async process(job: Job<{ mailId: string }>): Promise<{ status: string }> {
    const mail = await this.mails.findById(job.data.mailId);
    if (!mail || mail.status !== 'pending') return { status: mail?.status ?? 'missing' };
    const text = this.secretBox.open(mail.bodyEncrypted);
    try {
      if (this.transport) {
        await this.transport.sendMail({ from: FROM, to: mail.recipient, subject: mail.subject, text });
      } else {
        const shown = this.config.nodeEnv === 'production' ? text.replace(/https?:\/\/\S+/g, '[link redacted]') : text;
        this.logger.log({ to: mail.recipient, subject: mail.subject, body: shown }, 'mail (no SMTP_URL configured)');
      }
    } catch (error) {
      await this.mails.recordFailedAttempt(job.data.mailId, (error as Error).message.slice(0, 500));
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) await this.mails.markFailed(job.data.mailId);
      throw error;
    }
    const status = this.transport ? 'sent' : 'logged';
    await this.mails.markDone(job.data.mailId, status);
    return { status };
  }
}
