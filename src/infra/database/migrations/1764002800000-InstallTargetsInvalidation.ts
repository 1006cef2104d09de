import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every api instance remembers the execution targets of recently called
 * installs (`InstallsService.executionTarget`: the install, its package, the
 * live version's runtime URL, the developer's and the package's suspension,
 * the app's tier). These triggers announce on `install_targets_changed`, with
 * the package id as payload, every change that could make such an entry
 * wrong. PostgreSQL delivers the notification on commit (never on rollback),
 * whoever made the change; identical notifications of one transaction are
 * delivered once. A new install needs no notice: absent answers are never
 * remembered. The service never changes a version's runtime URL (a change is
 * a new version), but an operator may, in psql: that is announced too.
 */
export class InstallTargetsInvalidation1764002800000 implements MigrationInterface {
  name = 'InstallTargetsInvalidation1764002800000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      CREATE FUNCTION notify_install_targets_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_TABLE_NAME = 'installs' THEN
          PERFORM pg_notify('install_targets_changed', OLD.package_id);
          IF TG_OP = 'UPDATE' THEN PERFORM pg_notify('install_targets_changed', NEW.package_id); END IF;
        ELSIF TG_TABLE_NAME = 'package_versions' THEN
          PERFORM pg_notify('install_targets_changed', OLD.package_id);
        ELSIF TG_TABLE_NAME = 'packages' THEN
          PERFORM pg_notify('install_targets_changed', OLD.id);
        ELSIF TG_TABLE_NAME = 'developers' THEN
          PERFORM pg_notify('install_targets_changed', p.id) FROM packages p WHERE p.developer_id = OLD.id;
        ELSIF TG_TABLE_NAME = 'apps' THEN
          -- An install's app is its package's app (installs copy packages.app_id).
          PERFORM pg_notify('install_targets_changed', p.id) FROM packages p WHERE p.app_id = OLD.id;
        END IF;
        RETURN NULL;
      END
      $$`);
    await db.query(`
      CREATE TRIGGER installs_targets_changed AFTER UPDATE ON installs FOR EACH ROW
        WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.version_id IS DISTINCT FROM NEW.version_id
              OR OLD.scopes IS DISTINCT FROM NEW.scopes OR OLD.app_id IS DISTINCT FROM NEW.app_id
              OR OLD.user_id IS DISTINCT FROM NEW.user_id OR OLD.package_id IS DISTINCT FROM NEW.package_id
              OR OLD.id IS DISTINCT FROM NEW.id)
        EXECUTE FUNCTION notify_install_targets_changed()`);
    await db.query(`
      CREATE TRIGGER installs_targets_deleted AFTER DELETE ON installs FOR EACH ROW
        EXECUTE FUNCTION notify_install_targets_changed()`);
    await db.query(`
      CREATE TRIGGER packages_targets_changed AFTER UPDATE ON packages FOR EACH ROW
        WHEN (OLD.published_version_id IS DISTINCT FROM NEW.published_version_id OR OLD.suspended_at IS DISTINCT FROM NEW.suspended_at
              OR OLD.name IS DISTINCT FROM NEW.name OR OLD.developer_id IS DISTINCT FROM NEW.developer_id
              OR OLD.app_id IS DISTINCT FROM NEW.app_id OR OLD.id IS DISTINCT FROM NEW.id)
        EXECUTE FUNCTION notify_install_targets_changed()`);
    await db.query(`
      CREATE TRIGGER packages_targets_deleted AFTER DELETE ON packages FOR EACH ROW
        EXECUTE FUNCTION notify_install_targets_changed()`);
    await db.query(`
      CREATE TRIGGER package_versions_targets_changed AFTER UPDATE ON package_versions FOR EACH ROW
        WHEN (OLD.runtime_url IS DISTINCT FROM NEW.runtime_url)
        EXECUTE FUNCTION notify_install_targets_changed()`);
    await db.query(`
      CREATE TRIGGER developers_targets_changed AFTER UPDATE ON developers FOR EACH ROW
        WHEN (OLD.status IS DISTINCT FROM NEW.status)
        EXECUTE FUNCTION notify_install_targets_changed()`);
    await db.query(`
      CREATE TRIGGER apps_targets_changed AFTER UPDATE ON apps FOR EACH ROW
        WHEN (OLD.tier IS DISTINCT FROM NEW.tier)
        EXECUTE FUNCTION notify_install_targets_changed()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`DROP TRIGGER apps_targets_changed ON apps`);
    await db.query(`DROP TRIGGER developers_targets_changed ON developers`);
    await db.query(`DROP TRIGGER package_versions_targets_changed ON package_versions`);
    await db.query(`DROP TRIGGER packages_targets_deleted ON packages`);
    await db.query(`DROP TRIGGER packages_targets_changed ON packages`);
    await db.query(`DROP TRIGGER installs_targets_deleted ON installs`);
    await db.query(`DROP TRIGGER installs_targets_changed ON installs`);
    await db.query(`DROP FUNCTION notify_install_targets_changed()`);
  }
}
