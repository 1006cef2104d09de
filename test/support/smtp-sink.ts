import { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { waitFor } from './wait-for';

export interface ReceivedMail {
  to: string;
  subject: string;
  text: string;
}

/** A real SMTP server on loopback that keeps every message it receives. */
export class SmtpSink {
  readonly messages: ReceivedMail[] = [];
  private server: SMTPServer;
  url = '';

  static async start(): Promise<SmtpSink> {
    const sink = new SmtpSink();
    sink.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        simpleParser(stream)
          .then((mail) => {
            const to = Array.isArray(mail.to) ? mail.to.map((a) => a.text).join(', ') : (mail.to?.text ?? '');
            sink.messages.push({ to, subject: mail.subject ?? '', text: mail.text ?? '' });
            callback();
          })
          .catch((error: Error) => callback(error));
      },
    });
    await new Promise<void>((resolve) => sink.server.listen(0, '127.0.0.1', resolve));
    sink.url = `smtp://127.0.0.1:${(sink.server.server.address() as AddressInfo).port}`;
    return sink;
  }

  /** Waits for the next mail to `to` after `count` mails to that address were already seen. */
  async mailTo(to: string, count = 0): Promise<ReceivedMail> {
    return waitFor(() => this.messages.filter((m) => m.to.includes(to))[count], { what: `mail #${count + 1} to ${to}` });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The verification token carried by the link in a verification mail. */
export function verificationToken(mail: ReceivedMail): string {
  const match = /verify-email\?token=([^\s]+)/.exec(mail.text);
  if (!match) throw new Error(`no verification link in: ${mail.text}`);
  return decodeURIComponent(match[1]);
}
