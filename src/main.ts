import 'reflect-metadata';
import { AppLogger } from './infra/logging/app-logger';
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
  // On SIGTERM Fastify stops accepting connections, finishes in-flight requests,
  // then Nest runs shutdown hooks (the embedded worker closes its BullMQ workers,
  // which wait for active jobs). Exit 0: a requested stop is not a failure.
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    app.get(AppLogger).log(`${signal} received: draining`);
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.get(AppLogger).error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await app.listen({ port: config.port, host: config.host });
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  app.get(AppLogger).log(`api listening on http://${config.host}:${port} (role ${config.role})`);
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(78); // EX_CONFIG
  }
  process.stderr.write(`fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
