import { randomBytes } from 'node:crypto';
import { prepareDatabase } from '../../src/infra/database/migrate';
import { databaseUrl, TEMPLATE_ENV, withServer } from './database';

/**
 * Migrates one template database per run; every test file then clones it
 * (`CREATE DATABASE … TEMPLATE`), which takes milliseconds instead of a full migration.
 */
export default async function globalSetup(): Promise<void> {
  // Left over by an interrupted run of this machine: nobody else uses these names.
  await withServer(async (c) => {
    const stale = await c.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE 'svc\\_t\\_%' OR datname LIKE 'svc\\_tpl\\_%'`,
    );
    for (const { datname } of stale.rows) await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  });
  const name = `svc_tpl_${randomBytes(4).toString('hex')}`;
  await prepareDatabase(databaseUrl(name));
  // A template cannot be cloned while someone is connected to it; nobody will be.
  process.env[TEMPLATE_ENV] = name;
}
