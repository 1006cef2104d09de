import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Users in control of their account (issue 20). Sessions say which client
 * opened them and when they were last used (`GET /v1/sessions`); `last_used_at`
 * is written at most once a minute per session, by the session check that
 * runs anyway (see SessionsRepository.findLive), and changes nothing the
 * session cache holds, so the `sessions_auth_changed` trigger ignores it.
 *
 * `account_deletions` is the tombstone of `DELETE /v1/me`: the request records
 * it, a worker job erases the account and stamps `erased_at`. It holds no
 * personal data (an opaque user id and three dates) and has no foreign key,
 * so it outlives the user row it describes.
 *
 * `message_recipients.recipient_erased_at` marks the copies that reached a
 * user whose account was then erased: the user row's deletion sets their
 * `recipient_user_id` to NULL, and without the mark the pending-contact rule
 * would hand them to the next account that proves the same address.
 */
export class SessionControl1764002400000 implements MigrationInterface {
  name = 'SessionControl1764002400000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      ALTER TABLE sessions
        ADD COLUMN last_used_at timestamptz NOT NULL DEFAULT now(),
        ADD COLUMN user_agent   text,
        ADD COLUMN ip_address   text`);
    await db.query(`
      CREATE TABLE account_deletions (
        user_id             text PRIMARY KEY,
        account_created_at  timestamptz NOT NULL,
        requested_at        timestamptz NOT NULL DEFAULT now(),
        erased_at           timestamptz
      )`);
    await db.query(`ALTER TABLE message_recipients ADD COLUMN recipient_erased_at timestamptz`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE message_recipients DROP COLUMN recipient_erased_at`);
    await db.query(`DROP TABLE IF EXISTS account_deletions`);
    await db.query(`ALTER TABLE sessions DROP COLUMN ip_address, DROP COLUMN user_agent, DROP COLUMN last_used_at`);
  }
}
