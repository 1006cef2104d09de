import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every api instance keeps recently checked sessions in memory (see
 * `SessionCache`). These triggers announce on the `user_auth_changed` channel,
 * with the user id as payload, every change that could make such an entry
 * wrong: a session revoked, shortened or deleted while live; a user's tier,
 * name, email or soul marker changed or the user deleted; a soul created or
 * deleted. PostgreSQL delivers the notification on commit (never on rollback),
 * whoever made the change, including statements run outside the service.
 */
export class SessionCacheInvalidation1764000900000 implements MigrationInterface {
  name = 'SessionCacheInvalidation1764000900000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE FUNCTION notify_user_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        -- TG_ARGV[0] names the column holding the user id; both sides of an update are announced.
        IF TG_OP IN ('UPDATE', 'DELETE') THEN
          PERFORM pg_notify('user_auth_changed', to_jsonb(OLD) ->> TG_ARGV[0]);
        END IF;
        IF TG_OP IN ('UPDATE', 'INSERT') THEN
          PERFORM pg_notify('user_auth_changed', to_jsonb(NEW) ->> TG_ARGV[0]);
        END IF;
        RETURN NULL;
      END
      $$`);
    await db.query(`
      CREATE TRIGGER sessions_auth_changed AFTER UPDATE ON sessions FOR EACH ROW
        WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.expires_at IS DISTINCT FROM NEW.expires_at
              OR OLD.user_id IS DISTINCT FROM NEW.user_id OR OLD.id IS DISTINCT FROM NEW.id)
        EXECUTE FUNCTION notify_user_auth_changed('user_id')`);
    // Deleting sessions that had already ended (the retention purge) changes nothing a cache may hold.
    await db.query(`
      CREATE TRIGGER sessions_auth_deleted AFTER DELETE ON sessions FOR EACH ROW
        WHEN (OLD.revoked_at IS NULL AND OLD.expires_at > now())
        EXECUTE FUNCTION notify_user_auth_changed('user_id')`);
    await db.query(`
      CREATE TRIGGER users_auth_changed AFTER UPDATE ON users FOR EACH ROW
        WHEN (OLD.tier IS DISTINCT FROM NEW.tier OR OLD.name IS DISTINCT FROM NEW.name OR OLD.email IS DISTINCT FROM NEW.email
              OR OLD.soul_deleted_at IS DISTINCT FROM NEW.soul_deleted_at OR OLD.created_at IS DISTINCT FROM NEW.created_at
              OR OLD.id IS DISTINCT FROM NEW.id)
        EXECUTE FUNCTION notify_user_auth_changed('id')`);
    await db.query(`
      CREATE TRIGGER users_auth_deleted AFTER DELETE ON users FOR EACH ROW
        EXECUTE FUNCTION notify_user_auth_changed('id')`);
    await db.query(`
      CREATE TRIGGER souls_auth_changed AFTER INSERT OR DELETE OR UPDATE OF id, user_id ON souls FOR EACH ROW
        EXECUTE FUNCTION notify_user_auth_changed('user_id')`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER souls_auth_changed ON souls`);
    await db.query(`DROP TRIGGER users_auth_deleted ON users`);
    await db.query(`DROP TRIGGER users_auth_changed ON users`);
    await db.query(`DROP TRIGGER sessions_auth_deleted ON sessions`);
    await db.query(`DROP TRIGGER sessions_auth_changed ON sessions`);
    await db.query(`DROP FUNCTION notify_user_auth_changed()`);
  }
}
