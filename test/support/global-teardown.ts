import { TEMPLATE_ENV, withServer } from './database';

export default async function globalTeardown(): Promise<void> {
  const name = process.env[TEMPLATE_ENV];
  if (name) await withServer((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}
