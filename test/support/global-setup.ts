import { randomBytes } from 'node:crypto';
import { prepareDatabase } from '../../src/infra/database/migrate';
import { databaseUrl, STALE_AFTER_SECONDS, TEMPLATE_ENV, withServer } from './database';

/**
 * Migrates one template database per run; every test file then clones it
 * (`CREATE DATABASE … TEMPLATE`), which takes milliseconds instead of a full migration.
 */
export default async function globalSetup(): Promise<void> {
  // Left over by interrupted runs: old enough that no run still going can own them
  // (names carry their creation time, so parallel runs leave each other alone).
  await withServer(async (c) => {
    const all = await c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname ~ '^svc_(t|tpl)_[0-9]+_'`);
    const cutoff = Date.now() / 1000 - STALE_AFTER_SECONDS;
    for (const { datname } of all.rows) {
      if (Number(datname.split('_')[2]) < cutoff) await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
  });
  const name = `svc_tpl_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  await prepareDatabase(databaseUrl(name));
  // A template cannot be cloned while someone is connected to it; nobody will be.
  process.env[TEMPLATE_ENV] = name;
}
