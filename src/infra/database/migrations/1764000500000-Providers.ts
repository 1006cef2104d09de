import { MigrationInterface, QueryRunner } from 'typeorm';

/** Developer accounts, email verification, mail outbox, console sessions, apps and OAuth refresh-token families. */
export class Providers1764000500000 implements MigrationInterface {
  name = 'Providers1764000500000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE developers (
        id                    text PRIMARY KEY,
        company_name          text NOT NULL,
        email                 text NOT NULL,
        password_hash         text NOT NULL,
        email_verified_at     timestamptz,
        status                text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
        mfa_secret_encrypted  text,
        mfa_enabled_at        timestamptz,
        created_at            timestamptz NOT NULL DEFAULT now(),
        updated_at            timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE UNIQUE INDEX developers_email_idx ON developers (lower(email))`);

    await db.query(`
      CREATE TABLE email_verifications (
        id             text PRIMARY KEY,
        developer_id   text NOT NULL REFERENCES developers (id) ON DELETE CASCADE,
        token_hash     text NOT NULL UNIQUE,
        created_at     timestamptz NOT NULL DEFAULT now(),
        expires_at     timestamptz NOT NULL,
        used_at        timestamptz,
        invalidated_at timestamptz
      )`);
    await db.query(`CREATE INDEX email_verifications_developer_idx ON email_verifications (developer_id)`);

    await db.query(`
      CREATE TABLE mail_outbox (
        id              text PRIMARY KEY,
        recipient       text NOT NULL,
        subject         text NOT NULL,
        body_encrypted  text NOT NULL,
        status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'logged', 'failed')),
        attempts        integer NOT NULL DEFAULT 0,
        last_error      text,
        created_at      timestamptz NOT NULL DEFAULT now(),
        sent_at         timestamptz
      )`);
    await db.query(`CREATE INDEX mail_outbox_pending_idx ON mail_outbox (created_at) WHERE status = 'pending'`);

    await db.query(`
      CREATE TABLE developer_sessions (
        id            text PRIMARY KEY,
        developer_id  text NOT NULL REFERENCES developers (id) ON DELETE CASCADE,
        created_at    timestamptz NOT NULL DEFAULT now(),
        expires_at    timestamptz NOT NULL,
        revoked_at    timestamptz
      )`);

    await db.query(`
      CREATE TABLE apps (
        id                          text PRIMARY KEY,
        developer_id                text NOT NULL REFERENCES developers (id) ON DELETE CASCADE,
        name                        text NOT NULL,
        description                 text NOT NULL DEFAULT '',
        redirect_uris               text[] NOT NULL DEFAULT '{}',
        webhook_url                 text,
        scopes                      text[] NOT NULL,
        client_id                   text NOT NULL UNIQUE,
        client_secret_hash          text NOT NULL,
        previous_secret_hash        text,
        previous_secret_expires_at  timestamptz,
        secret_rotated_at           timestamptz,
        created_at                  timestamptz NOT NULL DEFAULT now(),
        updated_at                  timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX apps_developer_idx ON apps (developer_id, created_at)`);

    await db.query(`
      CREATE TABLE oauth_refresh_tokens (
        id          text PRIMARY KEY,
        family_id   text NOT NULL,
        app_id      text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
        user_id     text REFERENCES users (id) ON DELETE CASCADE,
        install_id  text,
        scopes      text[] NOT NULL,
        token_hash  text NOT NULL UNIQUE,
        parent_id   text,
        created_at  timestamptz NOT NULL DEFAULT now(),
        expires_at  timestamptz NOT NULL,
        used_at     timestamptz,
        revoked_at  timestamptz
      )`);
    await db.query(`CREATE INDEX oauth_refresh_tokens_family_idx ON oauth_refresh_tokens (family_id)`);
  }

  async down(db: QueryRunner): Promise<void> {
    for (const table of ['oauth_refresh_tokens', 'apps', 'developer_sessions', 'mail_outbox', 'email_verifications', 'developers']) {
      await db.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
