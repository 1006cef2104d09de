import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Who started a pending action (issue 18): the user in the app, or an app acting
 * for them. The app shows the user the ones an app started: the user's own are
 * asked about in the dialog of the widget that started them.
 */
export class ConfirmationStarter1764001710000 implements MigrationInterface {
  name = 'ConfirmationStarter1764001710000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(
      `ALTER TABLE action_confirmations ADD COLUMN started_by text NOT NULL DEFAULT 'user' CHECK (started_by IN ('user', 'app'))`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE action_confirmations DROP COLUMN started_by`);
  }
}
