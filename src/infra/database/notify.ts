import type { DataSource } from 'typeorm';

/**
 * Sends a PostgreSQL notification on `channel` outside any transaction (so it
 * is delivered at once, after everything committed before it): the cache
 * fence's barrier (`CacheFence`). Triggers send the others.
 */
export async function notify(dataSource: DataSource, channel: string, payload: string): Promise<void> {
  await dataSource.query('SELECT pg_notify($1, $2)', [channel, payload]);
}
