import 'reflect-metadata';
import { Logger } from 'nestjs-pino';
import { createApiApp } from './bootstrap';
import { ConfigError, loadConfig } from './config/app-config';
import { startWorker } from './worker';

/**
 * Entry point of the api role. With `APP_ROLE=all` (the default) the worker
 * role runs in the same process; with `APP_ROLE=worker` this hands over to it.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  if (config.role === 'worker') {
    await startWorker(config);
    return;
  }
  const app = await createApiApp(config);
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  await app.listen({ port: config.port, host: config.host });
  app.get(Logger).log(`api listening on http://${config.host}:${config.port} (role ${config.role})`);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(78); // EX_CONFIG
  }
  process.stderr.write(`fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
