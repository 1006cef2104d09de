import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../database/sql-repository';

/** A mail as the sender reads it: the body still sealed. */
export interface StoredMail {
  recipient: string;
  subject: string;
  bodyEncrypted: string;
  /** `pending` until sent (`sent`), logged without SMTP (`logged`) or given up (`failed`). */
  status: string;
}

interface MailRow {
  recipient: string;
  subject: string;
  body_encrypted: string;
  status: string;
}

/** The `mail_outbox` table: mail written with the change that causes it, sent by the worker, purged after 30 days. */
@Injectable()
export class MailOutboxRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  async insert(tx: Tx, mail: { id: string; recipient: string; subject: string; bodyEncrypted: string }): Promise<void> {
    await this.execute(
      `INSERT INTO mail_outbox (id, recipient, subject, body_encrypted) VALUES ($1, $2, $3, $4)`,
      [mail.id, mail.recipient, mail.subject, mail.bodyEncrypted],
      tx,
    );
  }

  async findById(id: string): Promise<StoredMail | null> {
    const row = await this.first<MailRow>(`SELECT recipient, subject, body_encrypted, status FROM mail_outbox WHERE id = $1`, [id]);
    return row && { recipient: row.recipient, subject: row.subject, bodyEncrypted: row.body_encrypted, status: row.status };
  }

  /** Counts a failed sending attempt and keeps its error. */
  async recordFailedAttempt(id: string, error: string): Promise<void> {
    await this.execute(`UPDATE mail_outbox SET attempts = attempts + 1, last_error = $2 WHERE id = $1`, [id, error]);
  }

  /** Gives the mail up: no attempt is left. */
  async markFailed(id: string): Promise<void> {
    await this.execute(`UPDATE mail_outbox SET status = 'failed' WHERE id = $1`, [id]);
  }

  /** Counts the attempt that delivered (`sent`) or logged (`logged`) the mail. */
  async markDone(id: string, status: 'sent' | 'logged'): Promise<void> {
    await this.execute(`UPDATE mail_outbox SET status = $2, attempts = attempts + 1, sent_at = now() WHERE id = $1`, [id, status]);
  }

  /** Deletes delivered, logged or failed mail older than 30 days; answers how many. */
  async purgeDelivered(): Promise<number> {
    const { count } = await this.changed(
      `DELETE FROM mail_outbox WHERE status IN ('sent', 'logged', 'failed') AND created_at < now() - interval '30 days'`,
    );
    return count;
  }
}
