import { MigrationInterface, QueryRunner } from 'typeorm';

/** Identity, soul record, contacts, groups, messages, idempotency, exports and agent actions. */
export class UserApi1764000100000 implements MigrationInterface {
  name = 'UserApi1764000100000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE users (
        id           text PRIMARY KEY,
        idp_subject  text NOT NULL UNIQUE,
        name         text NOT NULL DEFAULT '',
        email        text,
        tier         text NOT NULL DEFAULT 'free' CHECK (tier IN ('free', 'pro', 'enterprise')),
        created_at   timestamptz NOT NULL DEFAULT now(),
        updated_at   timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX users_email_idx ON users (lower(email))`);

    await db.query(`
      CREATE TABLE sessions (
        id          text PRIMARY KEY,
        user_id     text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        created_at  timestamptz NOT NULL DEFAULT now(),
        expires_at  timestamptz NOT NULL,
        revoked_at  timestamptz
      )`);
    await db.query(`CREATE INDEX sessions_user_idx ON sessions (user_id)`);

    await db.query(`
      CREATE TABLE signing_keys (
        kid                   text PRIMARY KEY,
        algorithm             text NOT NULL,
        public_jwk            jsonb NOT NULL,
        private_jwk_encrypted text NOT NULL,
        created_at            timestamptz NOT NULL DEFAULT now(),
        retired_at            timestamptz
      )`);

    await db.query(`
      CREATE TABLE souls (
        id                  text PRIMARY KEY,
        user_id             text NOT NULL UNIQUE REFERENCES users (id) ON DELETE CASCADE,
        communication_style text NOT NULL,
        humour              text NOT NULL,
        formality           double precision NOT NULL CHECK (formality BETWEEN 0 AND 1),
        empathy             double precision NOT NULL CHECK (empathy BETWEEN 0 AND 1),
        "values"            text[] NOT NULL DEFAULT '{}',
        created_at          timestamptz NOT NULL DEFAULT now(),
        updated_at          timestamptz NOT NULL DEFAULT now()
      )`);
    // A deleted soul is never silently re-created at the next login.
    await db.query(`ALTER TABLE users ADD COLUMN soul_deleted_at timestamptz`);

    await db.query(`
      CREATE TABLE contacts (
        id                 text PRIMARY KEY,
        user_id            text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name               text NOT NULL,
        email              text,
        linked_user_id     text REFERENCES users (id) ON DELETE SET NULL,
        interaction_weight double precision NOT NULL DEFAULT 0,
        weight_at          timestamptz,
        last_interaction   timestamptz,
        created_at         timestamptz NOT NULL DEFAULT now(),
        updated_at         timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX contacts_user_idx ON contacts (user_id, name)`);
    await db.query(`CREATE UNIQUE INDEX contacts_user_email_idx ON contacts (user_id, lower(email)) WHERE email IS NOT NULL`);
    await db.query(`CREATE INDEX contacts_linked_user_idx ON contacts (linked_user_id) WHERE linked_user_id IS NOT NULL`);

    await db.query(`
      CREATE TABLE groups (
        id          text PRIMARY KEY,
        user_id     text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name        text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        updated_at  timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX groups_user_idx ON groups (user_id, name)`);
    await db.query(`
      CREATE TABLE group_members (
        group_id    text NOT NULL REFERENCES groups (id) ON DELETE CASCADE,
        contact_id  text NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
        added_at    timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (group_id, contact_id)
      )`);
    await db.query(`CREATE INDEX group_members_contact_idx ON group_members (contact_id)`);

    await db.query(`
      CREATE TABLE messages (
        id              text PRIMARY KEY,
        sender_id       text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        recipient_kind  text NOT NULL CHECK (recipient_kind IN ('contact', 'group')),
        recipient_id    text NOT NULL,
        type            text NOT NULL,
        content         text NOT NULL,
        status          text NOT NULL,
        created_at      timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX messages_thread_idx ON messages (sender_id, recipient_id, created_at DESC, id DESC)`);
    await db.query(`
      CREATE TABLE message_recipients (
        message_id        text NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
        contact_id        text NOT NULL,
        recipient_user_id text REFERENCES users (id) ON DELETE SET NULL,
        status            text NOT NULL DEFAULT 'sent',
        delivered_at      timestamptz,
        read_at           timestamptz,
        PRIMARY KEY (message_id, contact_id)
      )`);
    await db.query(
      `CREATE INDEX message_recipients_user_idx ON message_recipients (recipient_user_id, message_id) WHERE recipient_user_id IS NOT NULL`,
    );

    await db.query(`
      CREATE TABLE idempotency_keys (
        owner_id         text NOT NULL,
        scope            text NOT NULL,
        key              text NOT NULL,
        request_hash     text NOT NULL,
        response_status  integer NOT NULL,
        response_body    jsonb NOT NULL,
        created_at       timestamptz NOT NULL DEFAULT now(),
        expires_at       timestamptz NOT NULL,
        PRIMARY KEY (owner_id, scope, key)
      )`);
    await db.query(`CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at)`);

    await db.query(`
      CREATE TABLE exports (
        id            text PRIMARY KEY,
        user_id       text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        format        text NOT NULL,
        status        text NOT NULL DEFAULT 'pending',
        content       text,
        content_type  text,
        error         text,
        created_at    timestamptz NOT NULL DEFAULT now(),
        completed_at  timestamptz,
        expires_at    timestamptz NOT NULL
      )`);
    await db.query(`CREATE INDEX exports_user_idx ON exports (user_id)`);
    await db.query(`CREATE INDEX exports_expires_idx ON exports (expires_at)`);

    await db.query(`
      CREATE TABLE agent_actions (
        id            text PRIMARY KEY,
        user_id       text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        action        text NOT NULL,
        params        jsonb NOT NULL,
        status        text NOT NULL DEFAULT 'queued',
        result        jsonb,
        error         text,
        created_at    timestamptz NOT NULL DEFAULT now(),
        completed_at  timestamptz
      )`);
    await db.query(`CREATE INDEX agent_actions_user_idx ON agent_actions (user_id, created_at DESC)`);
  }

  async down(db: QueryRunner): Promise<void> {
    for (const table of [
      'agent_actions',
      'exports',
      'idempotency_keys',
      'message_recipients',
      'messages',
      'group_members',
      'groups',
      'contacts',
      'souls',
      'signing_keys',
      'sessions',
      'users',
    ]) {
      await db.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
