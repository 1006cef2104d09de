import 'reflect-metadata';
import { createServer, Server } from 'node:http';
import { INestApplicationContext } from '@nestjs/common';
import { AppLogger } from './infra/logging/app-logger';
import { createWorkerApp } from './bootstrap';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { BackboneMetrics } from './infra/metrics/backbone-metrics';
import { HealthService } from './modules/health/health.service';

/**
 * The worker's only listener: liveness and readiness for the orchestrator, and the Prometheus metrics. It is an
 * internal port (never published), so `/metrics` is open here, unlike on the api port (docs/decisions.md "Metrics").
 */
export function startHealthServer(app: INestApplicationContext, port: number, host: string): Server {
  const health = app.get(HealthService);
  const metrics = app.get(BackboneMetrics);
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.url === '/health/live') return send(200, { status: 'ok' });
    if (req.url === '/health/ready') {
      void health.readiness().then((r) => send(r.status === 'ok' ? 200 : 503, r));
      return;
    }
    if (req.url === '/metrics') {
      metrics.render().then(
        ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
        () => send(500, { error: { code: 'INTERNAL_ERROR', message: 'Metrics could not be rendered', status: 500 } }),
      );
      return;
    }
    send(404, { error: { code: 'NOT_FOUND', message: 'Route not found', status: 404 } });
  });
  server.listen(port, host);
  return server;
}

/** Runs the worker role until SIGTERM/SIGINT, then lets active jobs finish before exiting. */
export async function startWorker(config: AppConfig): Promise<void> {
  const app = await createWorkerApp({ ...config, role: 'worker' });
  const logger = app.get(AppLogger);
  const server = config.workerHealthPort > 0 ? startHealthServer(app, config.workerHealthPort, config.host) : null;
  logger.log(`worker started${server ? `; health on port ${config.workerHealthPort}` : ''}`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal} received: finishing active jobs`);
    server?.close();
    // Closing the context closes every BullMQ worker, which waits for its active jobs.
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

if (require.main === module) {
  startWorker({ ...safeLoadConfig(), role: 'worker' }).catch((error: unknown) => {
    process.stderr.write(`fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}

function safeLoadConfig(): AppConfig {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
}
