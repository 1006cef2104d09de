import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every api instance remembers what recently checked app tokens stand on (see
 * `PlatformStandings`). These triggers announce on the `platform_auth_changed`
 * channel, with the developer id as payload, every change that could make
 * such an entry wrong: a developer suspended, reinstated, verified or deleted;
 * an app's scopes, client secret generation or grace period changed, or the
 * app deleted or moved. PostgreSQL delivers the notification on commit (never
 * on rollback), whoever made the change. The function is the session cache's
 * (`notify_user_auth_changed`) on another channel.
 */
export class PlatformAuthInvalidation1764002300000 implements MigrationInterface {
  name = 'PlatformAuthInvalidation1764002300000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE FUNCTION notify_platform_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        -- TG_ARGV[0] names the column holding the developer id; both sides of an update are announced.
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
          PERFORM pg_notify('platform_auth_changed', to_jsonb(OLD) ->> TG_ARGV[0]);
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
          PERFORM pg_notify('platform_auth_changed', to_jsonb(NEW) ->> TG_ARGV[0]);
        END IF;
        RETURN NULL;
      END
      $$`);
    await db.query(`
      CREATE TRIGGER developers_platform_auth_changed AFTER UPDATE ON developers FOR EACH ROW
        WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.email_verified_at IS DISTINCT FROM NEW.email_verified_at
              OR OLD.id IS DISTINCT FROM NEW.id)
        EXECUTE FUNCTION notify_platform_auth_changed('id')`);
    await db.query(`
      CREATE TRIGGER developers_platform_auth_deleted AFTER DELETE ON developers FOR EACH ROW
        EXECUTE FUNCTION notify_platform_auth_changed('id')`);
    await db.query(`
      CREATE TRIGGER apps_platform_auth_changed AFTER UPDATE ON apps FOR EACH ROW
        WHEN (OLD.scopes IS DISTINCT FROM NEW.scopes OR OLD.secret_generation IS DISTINCT FROM NEW.secret_generation
              OR OLD.previous_secret_expires_at IS DISTINCT FROM NEW.previous_secret_expires_at
              OR OLD.developer_id IS DISTINCT FROM NEW.developer_id OR OLD.id IS DISTINCT FROM NEW.id)
        EXECUTE FUNCTION notify_platform_auth_changed('developer_id')`);
    await db.query(`
      CREATE TRIGGER apps_platform_auth_deleted AFTER DELETE ON apps FOR EACH ROW
        EXECUTE FUNCTION notify_platform_auth_changed('developer_id')`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER apps_platform_auth_deleted ON apps`);
    await db.query(`DROP TRIGGER apps_platform_auth_changed ON apps`);
    await db.query(`DROP TRIGGER developers_platform_auth_deleted ON developers`);
    await db.query(`DROP TRIGGER developers_platform_auth_changed ON developers`);
    await db.query(`DROP FUNCTION notify_platform_auth_changed()`);
  }
}
