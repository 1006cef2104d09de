import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A user's verified address: the email of their latest login whose identity
 * token said `email_verified: true`, lower-cased, held by one user at most.
 * `users.email` stays the display address and may be unverified.
 *
 * Contacts no longer store who they are linked to: the link is derived at
 * read time (the contact's email equals a user's `verified_email`), so it
 * follows the address when a newer verified login takes it, with no window in
 * which the previous holder still receives. Stored links were computed from
 * unverified emails, so none is kept; and since no existing email was ever
 * known to be verified, every user starts without one and regains it at
 * their next login.
 */
export class VerifiedEmails1764001200000 implements MigrationInterface {
  name = 'VerifiedEmails1764001200000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE users ADD COLUMN verified_email text CHECK (verified_email = lower(verified_email))`);
    await db.query(`CREATE UNIQUE INDEX users_verified_email_idx ON users (verified_email) WHERE verified_email IS NOT NULL`);
    await db.query(`DROP INDEX contacts_linked_user_idx`);
    await db.query(`ALTER TABLE contacts DROP COLUMN linked_user_id`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE contacts ADD COLUMN linked_user_id text REFERENCES users (id) ON DELETE SET NULL`);
    await db.query(`
      UPDATE contacts c SET linked_user_id = u.id
        FROM users u
       WHERE c.email IS NOT NULL AND u.verified_email = lower(c.email) AND u.id <> c.user_id`);
    await db.query(`CREATE INDEX contacts_linked_user_idx ON contacts (linked_user_id) WHERE linked_user_id IS NOT NULL`);
    await db.query(`DROP INDEX users_verified_email_idx`);
    await db.query(`ALTER TABLE users DROP COLUMN verified_email`);
  }
}
