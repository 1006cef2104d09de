import { INestApplicationContext, ModuleMetadata, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { WsAdapter } from '@nestjs/platform-ws';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { RequestValidationError } from './common/errors/request-validation.error';
import { BodyTooDeepError, MAX_BODY_DEPTH, nestedDeeperThan } from './common/http/body-depth';
import { HttpDrain } from './common/http/http-drain';
import { REQUEST_ID_HEADER, requestIdFor } from './common/http/request-id';
import { registerWebPages } from './common/http/web-pages';
import { AppConfig } from './config/app-config';
import { prepareDatabase } from './infra/database/migrate';
import { WorkerModule } from './worker.module';

export interface BootOptions {
  /** Extra modules, for tests. */
  imports?: ModuleMetadata['imports'];
  /** Skip creating the database and running migrations (already done). */
  skipMigrations?: boolean;
}

/** Creates the database if missing and applies migrations. */
export async function prepareInfrastructure(config: AppConfig): Promise<void> {
  await prepareDatabase(config.databaseUrl);
}

/** Builds the api role (and the worker too when `config.role` is `all`), ready to `listen`. */
export async function createApiApp(config: AppConfig, options: BootOptions = {}): Promise<NestFastifyApplication> {
  if (!options.skipMigrations) await prepareInfrastructure(config);
  const adapter = new FastifyAdapter({
    logger: false,
    genReqId: requestIdFor,
    requestIdHeader: false,
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, { withWorker: config.role === 'all', imports: options.imports }),
    adapter,
    // rawBody: inbound webhook signatures are checked over the exact bytes received, never re-serialised JSON.
    { bufferLogs: true, abortOnError: false, rawBody: true },
  );
  app.useLogger(app.get(Logger));
  app.flushLogs();
  // The gateway shares the HTTP server: upgrades to /v1/gateway become WebSockets (see modules/gateway).
  app.useWebSocketAdapter(new WsAdapter(app));

  // Hooks in callback style: they run on every request, and an async hook costs a promise each time.
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    // API answers are personal or carry credentials (tokens, secrets shown once: RFC 6749 §5.1), so no cache
    // may keep them; a route that can be cached says so itself.
    if (request.url.startsWith('/v1/')) void reply.header('cache-control', 'no-store');
    done();
  });
  // Deeply nested JSON (thousands of levels) would overflow the stack of the recursive validation pipe: refuse it first.
  fastify.addHook('preValidation', (request, _reply, done) => {
    if (request.body !== undefined && nestedDeeperThan(request.body, MAX_BODY_DEPTH)) return done(new BodyTooDeepError());
    done();
  });
  const drain = app.get(HttpDrain);
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (drain.draining) void reply.header('connection', 'close');
    done(null, payload);
  });

  app.useGlobalPipes(
    new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      exceptionFactory: (errors) => RequestValidationError.fromClassValidator(errors),
    }),
  );

  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Service API')
      .setDescription(
        'User API (`{ error: { code, message, status } }` errors) and provider platform (RFC 9457 problem details). ' +
          'Real-time events: WebSocket at `/v1/gateway?token=…`, full event reference under the `gateway` tag (docs/events.md).',
      )
      .setVersion('1')
      .addBearerAuth()
      .build(),
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/openapi.json' });
  // The consumer app (/app) and the developer console (/console): static pages built from web/ that use the public API.
  registerWebPages(fastify);

  await app.init();
  return app;
}

/** Builds the worker role: processors, dispatcher and schedulers, without HTTP. */
export async function createWorkerApp(config: AppConfig, options: BootOptions = {}): Promise<INestApplicationContext> {
  if (!options.skipMigrations) await prepareInfrastructure(config);
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config, { imports: options.imports }), {
    bufferLogs: true,
    abortOnError: false,
  });
  app.useLogger(app.get(Logger));
  app.flushLogs();
  await app.init();
  return app;
}
