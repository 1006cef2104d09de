import { DataSource } from 'typeorm';
import { dataSourceOptions } from './data-source-options';
import { ensureDatabase } from './ensure-database';

// Arbitrary constant shared by every process of the service: only one runs migrations at a time.
const MIGRATION_LOCK = 7_340_211;

/**
 * Creates the database if needed and applies pending migrations under an advisory
 * lock, so an api and a worker starting together never race on the schema.
 */
export async function prepareDatabase(databaseUrl: string): Promise<string[]> {
  await ensureDatabase(databaseUrl);
  const dataSource = new DataSource({ ...dataSourceOptions(databaseUrl), extra: { max: 2 } }); // one connection holds the lock, one migrates
  await dataSource.initialize();
  const runner = dataSource.createQueryRunner();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'all' });
      return applied.map((m) => m.name);
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    await runner.release();
    await dataSource.destroy();
  }
}
