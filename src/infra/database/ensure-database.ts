import { Client } from 'pg';

/** Name of the database a PostgreSQL URL points at. */
export function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
}

/** The same server, but the `postgres` maintenance database. */
export function maintenanceUrl(url: string): string {
  const u = new URL(url);
  u.pathname = '/postgres';
  return u.toString();
}

/**
 * Creates the database named in `url` when it does not exist yet. Safe to call
 * from several processes at once: a concurrent creation is not an error.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const name = databaseName(url);
  const client = new Client({ connectionString: maintenanceUrl(url) });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      } catch (error) {
        // 42P04 duplicate_database, 23505 unique_violation: another process won the race.
        const code = (error as { code?: string }).code;
        if (code !== '42P04' && code !== '23505') throw error;
      }
    }
  } finally {
    await client.end();
  }
}
