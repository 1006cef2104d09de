import { INestApplicationContext, ModuleMetadata } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SwaggerModule } from '@nestjs/swagger';
import { AppLogger } from './infra/logging/app-logger';
import { registerRequestLog } from './infra/logging/request-log';
import { AppModule } from './app.module';
import { GatewayWsAdapter } from './modules/gateway/gateway-ws-adapter';
import { ApiError } from './common/errors/api-error';
import { ErrorEnvelopeFilter, MAX_PATH_PARAM_LENGTH } from './common/errors/error.filter';
import { BodyTooDeepError, MAX_BODY_DEPTH, nestedDeeperThan } from './common/http/body-depth';
import { clientErrorHandler } from './common/http/client-errors';
import { HttpDrain } from './common/http/http-drain';
import { REQUEST_ID_HEADER, requestIdFor } from './common/http/request-id';
import { illFormedTextError } from './common/http/text-input';
import { registerWebPages } from './common/http/web-pages';
import { RateLimits } from './common/rate-limit/rate-limits.service';
import { applyRateHeaders } from './common/rate-limit/user-rate-limit.guard';
import { buildOpenApiDocument } from './common/openapi/document';
import { RequestValidationPipe } from './common/validation/request-validation.pipe';
import { AppConfig } from './config/app-config';
import { prepareDatabase } from './infra/database/migrate';
import { WorkerModule } from './worker.module';
import { DEV_ANSWER_BODY_LIMIT, DEV_ANSWER_ROUTE } from './modules/runtime-bridge/dev-sessions.controller';

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
  // What the router refuses itself (a path parameter over the limit, bad percent-encoding) and what Node's
  // parser refuses (timeouts, oversized headers) are answered before any hook runs: the same filter renders
  // them in the path's envelope, with a request id and no echo of the URL.
  const frameworkErrors = new ErrorEnvelopeFilter(config);
  // Set once the app exists; the router only refuses requests after listen.
  const late: { limits?: RateLimits } = {};
  const adapter = new FastifyAdapter({
    logger: false,
    genReqId: requestIdFor,
    requestIdHeader: false,
    bodyLimit: 1024 * 1024,
    // While draining, the onRequest hook below refuses new requests itself, in the path's envelope.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    frameworkErrors: (error: Error, request: FastifyRequest, reply: FastifyReply) => {
      setCommonHeaders(request, reply);
      // These answers skip the hooks, so the limit headers the onSend hook below adds are added here.
      void reportAddressLimit(late.limits, request, reply).finally(() => frameworkErrors.render(error, request, reply));
    },
    clientErrorHandler: clientErrorHandler(frameworkErrors, () => late.limits),
    // No Nest middleware is used (request logging is a Fastify hook): without the middleware engine, a request
    // is not matched against middleware routes first.
    skipMiddie: true,
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, { withWorker: config.role === 'all', imports: options.imports }),
    adapter,
    // rawBody: inbound webhook signatures are checked over the exact bytes received, never re-serialised JSON.
    { bufferLogs: true, abortOnError: false, rawBody: true },
  );
  app.useLogger(app.get(AppLogger));
  app.flushLogs();
  // The gateway shares the HTTP server: upgrades to /v1/gateway become WebSockets (see modules/gateway).
  app.useWebSocketAdapter(new GatewayWsAdapter(app));

  // Hooks in callback style: they run on every request, and an async hook costs a promise each time.
  const fastify = app.getHttpAdapter().getInstance();
  // `soul dev` posts a runtime's whole answer (up to the largest tier's cap, JSON-escaped): that one route takes more.
  fastify.addHook('onRoute', (route) => {
    if (route.url === DEV_ANSWER_ROUTE) route.bodyLimit = DEV_ANSWER_BODY_LIMIT;
  });
  registerRequestLog(fastify, app.get(AppLogger).pino);
  const drain = app.get(HttpDrain);
  fastify.addHook('onRequest', (request, reply, done) => {
    setCommonHeaders(request, reply);
    if (drain.draining)
      return done(new ApiError('SERVICE_UNAVAILABLE', 'This instance is shutting down; retry shortly', { 'Retry-After': '1' }));
    done();
  });
  // Deeply nested JSON (thousands of levels) would overflow the stack of the recursive validation pipe: refuse it first.
  // Then ill-formed Unicode (NUL, lone surrogates) anywhere in params, query or body, once for every route.
  fastify.addHook('preValidation', (request, _reply, done) => {
    if (request.body !== undefined && nestedDeeperThan(request.body, MAX_BODY_DEPTH)) return done(new BodyTooDeepError());
    const illFormed = illFormedTextError(request);
    if (illFormed) return done(illFormed);
    done();
  });
  // An API answer given before any limiter ran (a malformed request, an unknown route, a refused token)
  // still reports the limit its caller is under: the per-address window, read without counting.
  const limits = (late.limits = app.get(RateLimits));
  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (drain.draining) void reply.header('connection', 'close');
    if (!request.url.startsWith('/v1/') || reply.hasHeader('x-ratelimit-limit')) return done(null, payload);
    void reportAddressLimit(limits, request, reply).finally(() => done(null, payload));
  });

  app.useGlobalPipes(new RequestValidationPipe());

  const document = buildOpenApiDocument(app);
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/openapi.json' });
  // The consumer app (/app) and the developer console (/console): static pages built from web/ that use the public API.
  registerWebPages(fastify, { firebaseAuthDomain: config.firebaseWeb?.authDomain });

  await app.init();
  return app;
}

/** The per-address limit headers on an API answer that no limiter has reported on (never fails the answer). */
async function reportAddressLimit(limits: RateLimits | undefined, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (!limits || !request.url.startsWith('/v1/') || reply.hasHeader('x-ratelimit-limit')) return;
  try {
    applyRateHeaders(reply, await limits.peekForAddress(request.ip));
  } catch {
    // Without the headers rather than without the answer.
  }
}

function setCommonHeaders(request: FastifyRequest, reply: FastifyReply): void {
  void reply.header(REQUEST_ID_HEADER, request.id);
  // API answers are personal or carry credentials (tokens, secrets shown once: RFC 6749 §5.1), so no cache
  // may keep them; a route that can be cached says so itself.
  if (request.url.startsWith('/v1/')) void reply.header('cache-control', 'no-store');
}

/** Builds the worker role: processors, dispatcher and schedulers, without HTTP. */
export async function createWorkerApp(config: AppConfig, options: BootOptions = {}): Promise<INestApplicationContext> {
  if (!options.skipMigrations) await prepareInfrastructure(config);
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config, { imports: options.imports }), {
    bufferLogs: true,
    abortOnError: false,
  });
  app.useLogger(app.get(AppLogger));
  app.flushLogs();
  await app.init();
  return app;
}
