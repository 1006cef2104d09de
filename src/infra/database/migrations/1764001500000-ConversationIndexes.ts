import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes of the consumer app's chat reads (issue 23):
 * - a verified login links the deliveries that waited for its address: pending
 *   recipient rows by contact, and contacts by address across owners;
 * - a group thread and the inbox read messages by what they were addressed to;
 * - the inbox counts each user's unread messages.
 */
export class ConversationIndexes1764001500000 implements MigrationInterface {
  name = 'ConversationIndexes1764001500000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`CREATE INDEX contacts_email_idx ON contacts (lower(email)) WHERE email IS NOT NULL`);
    await db.query(`CREATE INDEX message_recipients_pending_idx ON message_recipients (contact_id) WHERE recipient_user_id IS NULL`);
    await db.query(`CREATE INDEX messages_recipient_idx ON messages (recipient_id, created_at DESC, id DESC)`);
    await db.query(
      `CREATE INDEX message_recipients_unread_idx ON message_recipients (recipient_user_id, message_id)
        WHERE read_at IS NULL AND recipient_user_id IS NOT NULL`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP INDEX message_recipients_unread_idx`);
    await db.query(`DROP INDEX messages_recipient_idx`);
    await db.query(`DROP INDEX message_recipients_pending_idx`);
    await db.query(`DROP INDEX contacts_email_idx`);
  }
}
