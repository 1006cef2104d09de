import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The version of the rules (@soul-service/rules, `RULES_VERSION`) that scored
 * each conformance run, so a stored verdict keeps naming the rules that gave
 * it after the service moves to newer ones. Null until the run is scored, and
 * for runs scored before verdicts named their rules.
 */
export class ConformanceRulesVersion1764002900000 implements MigrationInterface {
  name = 'ConformanceRulesVersion1764002900000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE conformance_runs ADD COLUMN rules_version text`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`ALTER TABLE conformance_runs DROP COLUMN rules_version`);
  }
}
