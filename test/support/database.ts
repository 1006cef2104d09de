import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** Server the tests use; each test file gets its own database on it. */
export const TEST_SERVER_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const TEMPLATE_ENV = 'SVC_TEST_TEMPLATE_DB';
/** Test databases are named `svc_t_<epoch seconds>_<random>`, so a run can tell stale leftovers from a parallel run's. */
export const RUN_DATABASE_PREFIX = 'svc_t';
/** Leftovers older than this are from interrupted runs and are dropped. */
export const STALE_AFTER_SECONDS = 3 * 3600;

export function databaseUrl(name: string): string {
  const url = new URL(TEST_SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function withServer<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: databaseUrl('postgres') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh database cloned from the migrated template: cheap isolation per test file. */
export async function createTestDatabase(): Promise<{ name: string; url: string; drop: () => Promise<void> }> {
  const template = process.env[TEMPLATE_ENV];
  if (!template) throw new Error(`${TEMPLATE_ENV} is not set: run e2e tests through jest (globalSetup)`);
  const name = `${RUN_DATABASE_PREFIX}_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  await withServer((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
  return {
    name,
    url: databaseUrl(name),
    drop: () => withServer((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
