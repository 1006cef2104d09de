import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The spec's package input has no runtime URL: the runtime belongs to the
 * capabilities (`runtimeUrl` on a descriptor). A version created before any
 * runtime is declared (a draft, or a package of webhook capabilities only)
 * has none; its conformance run reports the missing runtime.
 */
export class OptionalRuntimeUrl1764001800000 implements MigrationInterface {
  name = 'OptionalRuntimeUrl1764001800000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE package_versions ALTER COLUMN runtime_url DROP NOT NULL`);
  }

  async down(db: QueryRunner): Promise<void> {
    // Versions without a runtime cannot be kept under the old rule.
    await db.query(`DELETE FROM package_versions WHERE runtime_url IS NULL AND state = 'draft'`);
    await db.query(`ALTER TABLE package_versions ALTER COLUMN runtime_url SET NOT NULL`);
  }
}
