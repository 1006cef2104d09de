import { MigrationInterface, QueryRunner } from 'typeorm';

/** Packages and their versions, conformance runs, installs, and OAuth authorization codes (PKCE installs). */
export class Packages1764000600000 implements MigrationInterface {
  name = 'Packages1764000600000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE TABLE packages (
        id                    text PRIMARY KEY,
        app_id                text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
        developer_id          text NOT NULL REFERENCES developers (id) ON DELETE CASCADE,
        name                  text NOT NULL,
        slug                  text NOT NULL UNIQUE,
        description           text NOT NULL,
        risk_tier             text NOT NULL CHECK (risk_tier IN ('data_only', 'action_capable', 'high_trust', 'strategic_surface')),
        runtime_url           text NOT NULL,
        latest_version_id     text,
        published_version_id  text,
        suspended_at          timestamptz,
        suspension            jsonb,
        last_activity_at      timestamptz NOT NULL DEFAULT now(),
        created_at            timestamptz NOT NULL DEFAULT now(),
        updated_at            timestamptz NOT NULL DEFAULT now()
      )`);
    await db.query(`CREATE INDEX packages_app_idx ON packages (app_id)`);
    await db.query(
      `CREATE INDEX packages_catalog_idx ON packages (published_version_id) WHERE published_version_id IS NOT NULL AND suspended_at IS NULL`,
    );

    await db.query(`
      CREATE TABLE package_versions (
        id                text PRIMARY KEY,
        package_id        text NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
        version           text NOT NULL,
        major             integer NOT NULL,
        minor             integer NOT NULL,
        patch             integer NOT NULL,
        capabilities      jsonb NOT NULL,
        state             text NOT NULL DEFAULT 'draft'
                          CHECK (state IN ('draft', 'submitted', 'in_review', 'approved', 'published', 'rejected', 'superseded')),
        review_reason     text,
        submitted_at      timestamptz,
        submitted_by      text,
        decided_at        timestamptz,
        published_at      timestamptz,
        created_at        timestamptz NOT NULL DEFAULT now(),
        updated_at        timestamptz NOT NULL DEFAULT now(),
        UNIQUE (package_id, version)
      )`);
    await db.query(`CREATE INDEX package_versions_review_idx ON package_versions (submitted_at) WHERE state = 'in_review'`);

    await db.query(`
      CREATE TABLE conformance_runs (
        id            text PRIMARY KEY,
        package_id    text NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
        version_id    text NOT NULL REFERENCES package_versions (id) ON DELETE CASCADE,
        developer_id  text NOT NULL,
        app_id        text NOT NULL,
        full_run      boolean NOT NULL,
        status        text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'completed', 'failed')),
        score         integer,
        passed        boolean,
        dimensions    jsonb,
        error         text,
        created_at    timestamptz NOT NULL DEFAULT now(),
        completed_at  timestamptz
      )`);
    await db.query(`CREATE INDEX conformance_runs_version_idx ON conformance_runs (version_id, created_at DESC)`);

    await db.query(`
      CREATE TABLE installs (
        id              text PRIMARY KEY,
        user_id         text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        package_id      text NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
        version_id      text NOT NULL REFERENCES package_versions (id),
        app_id          text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
        scopes          text[] NOT NULL,
        refresh_token_encrypted text,
        status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'removed')),
        removed_reason  text,
        created_at      timestamptz NOT NULL DEFAULT now(),
        removed_at      timestamptz
      )`);
    await db.query(`CREATE UNIQUE INDEX installs_active_idx ON installs (user_id, package_id) WHERE status = 'active'`);
    await db.query(`CREATE INDEX installs_package_idx ON installs (package_id) WHERE status = 'active'`);

    await db.query(`
      CREATE TABLE oauth_authorization_codes (
        code_hash       text PRIMARY KEY,
        app_id          text NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
        user_id         text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        package_id      text NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
        redirect_uri    text NOT NULL,
        scopes          text[] NOT NULL,
        code_challenge  text NOT NULL,
        created_at      timestamptz NOT NULL DEFAULT now(),
        expires_at      timestamptz NOT NULL,
        used_at         timestamptz
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    for (const table of ['oauth_authorization_codes', 'installs', 'conformance_runs', 'package_versions', 'packages']) {
      await db.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
