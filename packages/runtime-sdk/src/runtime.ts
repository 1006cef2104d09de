import type { ServerResponse } from 'node:http';
import type { JSONWebKeySet, JWTVerifyGetKey } from 'jose';
import { PackageDescriptor, ResolvedCapability, resolveCapabilities } from './descriptor';
import { actionAnswer, historyAnswer, stateAnswer } from './envelopes';
import { AnswerSchemaError, RuntimeError } from './errors';
import type { ActionHandler, AnyHandler, CallContext, Handlers, HistoryHandler, RealtimeHandler, StateHandler } from './handlers';
import { DEFAULT_IDEMPOTENCY_TTL_MS, IdempotencyStore, inputFingerprint, MemoryIdempotencyStore, StoredAnswer } from './idempotency';
import { SchemaChecker } from './schemas';
import { openEventStream } from './sse';
import {
  ExpressMiddleware,
  expressMiddleware,
  FastifyPluginLike,
  fastifyPlugin,
  NodeAdapterOptions,
  NodeListener,
  nodeListener,
} from './adapters';
import { IncomingHeaders, RuntimeTokenVerifier, VerifiedCall } from './verify';
import { WebhookReceiver, WebhookReceiverOptions } from './webhook-receiver';

export interface RuntimeOptions<D extends PackageDescriptor> {
  /** The package descriptor (docs/descriptor.md), ideally `as const` so handlers are typed from its schemas. */
  descriptor: D;
  /** The service's public base URL: the tokens' issuer and the home of its JWKS. */
  serviceUrl: string;
  /** Your app's id (`app_…`): the tokens' audience. */
  appId: string;
  handlers: NoInfer<Handlers<D>>;
  /** Keys to verify tokens with instead of `<serviceUrl>/.well-known/jwks.json` (the test kit passes its own). */
  keys?: JSONWebKeySet | JWTVerifyGetKey;
  /** The key set's address when it is not `<serviceUrl>/.well-known/jwks.json`. */
  jwksUrl?: string;
  /** The CLI's local key set, for local conformance and `soul invoke --local` (default: the `SOUL_LOCAL_JWKS` file; never in production). */
  localKeys?: JSONWebKeySet;
  clockToleranceSeconds?: number;
  /** Action idempotency: default a memory store keeping answers 24 hours; use `RedisIdempotencyStore` with several instances. */
  idempotency?: { store?: IdempotencyStore; ttlMs?: number };
  /**
   * Check every answer against the capability's schema before sending it, and
   * fail loudly on a mismatch (the service would refuse it as `execution_failed`).
   * Default: on unless `NODE_ENV` is `production`.
   */
  checkAnswers?: boolean;
  /** `metadata.source` of state answers that do not name one. Default: the descriptor's `slug`, else `runtime`. */
  source?: string;
  /** Receive the service's webhook deliveries too (the app's `webhook_url` pointing at this runtime). */
  webhooks?: WebhookReceiverOptions;
  /** Told about unexpected handler errors and answer-schema mismatches. Default: `console.error`. */
  onError?: (error: unknown, call: { capability: string; requestId?: string }) => void;
}

/** A request as an adapter hands it over: the raw body bytes, untouched. */
export interface RuntimeRequest {
  method: string;
  /** Path and query; only the `/capabilities/<name>/<execute|stream>` end of the path matters, so any mount prefix works. */
  url: string;
  headers: IncomingHeaders;
  body: Buffer;
}

/** What to send back: a JSON answer, or a stream the adapter opens on its Node response. */
export type RuntimeReply =
  { kind: 'json'; status: number; body: unknown } | { kind: 'stream'; open: (res: ServerResponse) => Promise<void> };

const ROUTE = /\/capabilities\/([^/?#]+)\/(execute|stream)\/?$/;
const PAGING = ['limit', 'cursor', 'direction'] as const;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const json = (status: number, body: unknown): RuntimeReply => ({ kind: 'json', status, body });
const fromError = (error: RuntimeError): RuntimeReply => json(error.status, error.toBody());

/**
 * A provider runtime: serves `POST …/capabilities/<name>/execute` and
 * `GET …/capabilities/<name>/stream` exactly as the service calls them
 * (docs/runtime-bridge.md), verifying every call's runtime token first
 * (docs/runtime-auth.md), then the params against the descriptor's schema,
 * then running the capability's handler and answering its mode's envelope.
 */
export class Runtime<D extends PackageDescriptor = PackageDescriptor> {
  readonly capabilities: ReadonlyMap<string, ResolvedCapability>;
  readonly verifier: RuntimeTokenVerifier;
  private readonly schemas = new SchemaChecker();
  private readonly handlers: ReadonlyMap<string, AnyHandler>;
  private readonly store: IdempotencyStore;
  private readonly idempotencyTtlMs: number;
  private readonly checkAnswers: boolean;
  private readonly source: string;
  private readonly webhooks?: WebhookReceiver;

  constructor(private readonly options: RuntimeOptions<D>) {
    this.capabilities = new Map(resolveCapabilities(options.descriptor).map((c) => [c.name, c]));
    this.handlers = bindHandlers(this.capabilities, options.handlers);
    this.verifier = new RuntimeTokenVerifier({
      serviceUrl: options.serviceUrl,
      appId: options.appId,
      keys: options.keys,
      jwksUrl: options.jwksUrl,
      clockToleranceSeconds: options.clockToleranceSeconds,
      localKeys: options.localKeys,
    });
    this.store = options.idempotency?.store ?? new MemoryIdempotencyStore();
    this.idempotencyTtlMs = options.idempotency?.ttlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS;
    this.checkAnswers = options.checkAnswers ?? process.env.NODE_ENV !== 'production';
    this.source = options.source ?? (typeof options.descriptor.slug === 'string' ? options.descriptor.slug : 'runtime');
    this.webhooks = options.webhooks && new WebhookReceiver(options.webhooks);
  }

  /** Whether a path is one this runtime serves (adapters mounted among other routes pass the rest on). */
  matches(path: string): boolean {
    return ROUTE.test(path) || (this.webhooks?.matches(path) ?? false);
  }

  get appId(): string {
    return this.options.appId;
  }

  /** A `node:http`/`node:https` request listener: `https.createServer(tls, runtime.listener())`. */
  listener(options: NodeAdapterOptions = {}): NodeListener {
    return nodeListener(this, options);
  }

  /** A Fastify plugin: `app.register(runtime.fastify(), { prefix: '/runtime' })`. */
  fastify(): FastifyPluginLike {
    return fastifyPlugin(this, { webhookPath: this.webhooks?.path });
  }

  /** An Express (4 or 5) middleware serving the capability routes: `app.use('/runtime', runtime.express())`, before any body parser. */
  express(): ExpressMiddleware {
    return expressMiddleware(this);
  }

  /** Answers one call; never throws (every failure becomes the runtime error envelope). */
  async handle(request: RuntimeRequest): Promise<RuntimeReply> {
    const path = request.url.split('?')[0];
    if (this.webhooks?.matches(path) && request.method.toUpperCase() === 'POST') return this.delivery(request);
    const route = ROUTE.exec(path);
    if (!route) return fromError(new RuntimeError('NOT_FOUND', `no runtime route ${request.method} ${path}`));
    let call: VerifiedCall;
    try {
      // Verified before anything else, so an unauthenticated caller learns nothing, not even which capabilities exist.
      call = await this.verifier.verify(request.headers);
    } catch (error) {
      return fromError(error as RuntimeError);
    }
    const name = decodeURIComponent(route[1]);
    const capability = this.capabilities.get(name);
    const streams = route[2] === 'stream';
    if (!capability || capability.type === 'webhook' || (capability.type === 'realtime') !== streams) {
      return fromError(new RuntimeError('NOT_FOUND', `this runtime has no capability ${name} at /${route[2]}`));
    }
    const expected = streams ? 'GET' : 'POST';
    if (request.method.toUpperCase() !== expected) {
      return fromError(new RuntimeError('NOT_FOUND', `${capability.name} is called with ${expected} /${route[2]}`));
    }
    try {
      if (streams) return this.stream(capability, call, request);
      return await this.execute(capability, call, request);
    } catch (error) {
      return fromError(this.unexpected(error, capability.name, call.requestId));
    }
  }

  /** A webhook delivery: signed, not tokened; verified over the raw bytes, then acknowledged. */
  private async delivery(request: RuntimeRequest): Promise<RuntimeReply> {
    try {
      const { status, body } = await this.webhooks!.receive(request.headers, request.body);
      return json(status, body);
    } catch (error) {
      this.report(error, 'webhooks');
      return json(500, { error: { code: 'handler_failed', message: 'the webhook handler failed; the service will retry' } });
    }
  }

  private async execute(capability: ResolvedCapability, call: VerifiedCall, request: RuntimeRequest): Promise<RuntimeReply> {
    const body = parseBody(request.body);
    if (typeof body.capability === 'string' && body.capability !== capability.name) {
      throw new RuntimeError('INVALID_PARAMS', `the body names capability ${body.capability}, the path ${capability.name}`, {
        field: 'capability',
      });
    }
    const context = callContext(capability, call, request, body);
    if (capability.type === 'action') {
      const input = objectMember(body, 'input');
      this.assertValid(capability.schema, input, 'input');
      return this.idempotent(capability, context, input);
    }
    const params = objectMember(body, 'params');
    if (capability.type === 'history') {
      assertPaging(params);
      this.assertValid(capability.schema, ownParams(capability, params), 'params');
      const answer = historyReply(await (this.handler(capability) as HistoryHandler)(params, context));
      if (answer.status === 'ok') this.checkHistory(capability, answer.items, params.limit);
      return json(200, answer);
    }
    this.assertValid(capability.schema, params, 'params');
    const returned = await (this.handler(capability) as StateHandler)(params, context);
    const answer = isEnvelope(returned)
      ? returned
      : stateAnswer(returned.data, {
          ttl: returned.ttl ?? capability.refreshInterval,
          source: returned.source ?? this.source,
          fetchedAt: returned.fetchedAt,
        });
    if (answer.status === 'ok') this.checkAnswer(capability, capability.responseSchema ?? capability.schema, answer.data, 'data');
    return json(200, answer);
  }

  /**
   * Runs an action once per idempotency key (spec, rule 3): the same key and
   * input answer the stored answer without running the handler again; the same
   * key with other input is `CONFLICT`. Answers a retry cannot change (success,
   * a non-retryable refusal) are kept; a retryable failure frees the key.
   */
  private async idempotent(capability: ResolvedCapability, context: CallContext, input: Record<string, unknown>): Promise<RuntimeReply> {
    const key = context.idempotencyKey;
    if (!key) {
      throw new RuntimeError('INVALID_PARAMS', 'an action call needs X-Service-Idempotency-Key', { field: 'X-Service-Idempotency-Key' });
    }
    const scoped = [this.options.appId, context.installId, capability.name, key].join(':');
    const fingerprint = inputFingerprint(input);
    const existing = await this.store.claim(scoped, fingerprint, this.idempotencyTtlMs);
    if (existing) {
      if (existing.fingerprint !== fingerprint) {
        throw new RuntimeError('CONFLICT', 'this idempotency key was used with different input');
      }
      if (!existing.answer) {
        throw new RuntimeError('RATE_LIMITED', 'an action with this idempotency key is still running', { retryAfter: 1 });
      }
      return json(existing.answer.status, existing.answer.body);
    }
    let answer: StoredAnswer;
    try {
      const returned = await (this.handler(capability) as ActionHandler)(input, context);
      const built = isEnvelope(returned) ? returned : actionAnswer(returned.result, returned.message);
      if (built.status === 'ok' && capability.responseSchema)
        this.checkAnswer(capability, capability.responseSchema, built.result, 'result');
      answer = { status: 200, body: built };
    } catch (error) {
      if (error instanceof RuntimeError && !error.retryable) {
        await this.store.complete(scoped, { fingerprint, answer: { status: error.status, body: error.toBody() } }, this.idempotencyTtlMs);
      } else {
        await this.store.release(scoped);
      }
      throw error;
    }
    await this.store.complete(scoped, { fingerprint, answer }, this.idempotencyTtlMs);
    return json(answer.status, answer.body);
  }

  private stream(capability: ResolvedCapability, call: VerifiedCall, request: RuntimeRequest): RuntimeReply {
    const context = callContext(capability, call, request, {});
    const query = Object.fromEntries(new URLSearchParams(request.url.split('?')[1] ?? ''));
    const handler = this.handler(capability) as RealtimeHandler;
    const schema = capability.responseSchema;
    return {
      kind: 'stream',
      open: async (res) => {
        const stream = openEventStream(res, {
          heartbeatIntervalSeconds: capability.heartbeatInterval,
          check: schema && this.checkAnswers ? (data) => this.checkAnswer(capability, schema, data, 'data') : undefined,
        });
        try {
          await handler(stream, context, query);
        } catch (error) {
          if (!(error instanceof RuntimeError)) this.report(error, capability.name, call.requestId);
          stream.close();
        }
      },
    };
  }

  private handler(capability: ResolvedCapability): AnyHandler {
    return this.handlers.get(capability.name)!;
  }

  private assertValid(schema: Record<string, unknown>, value: unknown, root: string): void {
    const violation = this.schemas.check(schema, value, root);
    if (violation) throw new RuntimeError('INVALID_PARAMS', `${violation.field} ${violation.message}`, { field: violation.field });
  }

  private checkHistory(capability: ResolvedCapability, items: unknown[], limit: unknown): void {
    if (!this.checkAnswers) return;
    if (typeof limit === 'number' && items.length > limit) {
      throw new AnswerSchemaError(capability.name, 'items', `holds ${items.length} items, more than the requested limit of ${limit}`);
    }
    if (!capability.responseSchema) return;
    items.forEach((item, i) => this.checkAnswer(capability, capability.responseSchema!, item, `items[${i}]`));
  }

  private checkAnswer(capability: ResolvedCapability, schema: Record<string, unknown>, value: unknown, root: string): void {
    if (!this.checkAnswers) return;
    const violation = this.schemas.check(schema, value, root);
    if (violation) throw new AnswerSchemaError(capability.name, violation.field, violation.message);
  }

  /** A RuntimeError as it is; anything else is reported and answered as a bare `INTERNAL_ERROR`. */
  private unexpected(error: unknown, capability: string, requestId: string): RuntimeError {
    if (error instanceof RuntimeError) return error;
    this.report(error, capability, requestId);
    if (error instanceof AnswerSchemaError) {
      // A wrong answer stays wrong on a retry: say so, and say what is wrong (development only: checks are off in production).
      return new RuntimeError('INTERNAL_ERROR', error.message, { retryable: false });
    }
    return new RuntimeError('INTERNAL_ERROR', 'the runtime failed unexpectedly');
  }

  private report(error: unknown, capability: string, requestId?: string): void {
    const onError =
      this.options.onError ?? ((e: unknown) => console.error(`[runtime-sdk] ${capability} (${requestId ?? 'no request id'}):`, e));
    onError(error, { capability, requestId });
  }
}

/** Every capability the service calls has exactly one handler, and every handler a capability: checked at start-up. */
function bindHandlers(capabilities: ReadonlyMap<string, ResolvedCapability>, handlers: Record<string, unknown>): Map<string, AnyHandler> {
  const bound = new Map<string, AnyHandler>();
  for (const [name, handler] of Object.entries(handlers)) {
    const capability = capabilities.get(name);
    if (!capability) throw new TypeError(`handler ${name} has no capability of that name in the descriptor`);
    if (capability.type === 'webhook')
      throw new TypeError(`${name} is a webhook capability: the service never calls it, so it takes no handler`);
    if (typeof handler !== 'function') throw new TypeError(`handler ${name} must be a function`);
    bound.set(name, handler as AnyHandler);
  }
  for (const capability of capabilities.values()) {
    if (capability.type !== 'webhook' && !bound.has(capability.name)) {
      throw new TypeError(`capability ${capability.name} (${capability.type}) has no handler`);
    }
  }
  return bound;
}

function parseBody(raw: Buffer): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new RuntimeError('INVALID_PARAMS', 'the request body is not JSON', { field: 'body' });
  }
  if (!isObject(body)) throw new RuntimeError('INVALID_PARAMS', 'the request body must be a JSON object', { field: 'body' });
  return body;
}

function objectMember(body: Record<string, unknown>, name: 'params' | 'input'): Record<string, unknown> {
  const value = body[name] ?? {};
  if (!isObject(value)) throw new RuntimeError('INVALID_PARAMS', `${name} must be an object`, { field: name });
  return value;
}

/** `limit` (a positive integer), `cursor` and `direction` (strings) are the service's, whatever the schema says. */
function assertPaging(params: Record<string, unknown>): void {
  const { limit, cursor, direction } = params;
  const refuse = (field: string, message: string) =>
    new RuntimeError('INVALID_PARAMS', `params.${field} ${message}`, { field: `params.${field}` });
  if (limit !== undefined && (!Number.isInteger(limit) || (limit as number) < 1)) throw refuse('limit', 'must be a positive integer');
  if (cursor !== undefined && cursor !== null && typeof cursor !== 'string') throw refuse('cursor', 'must be a string');
  if (direction !== undefined && typeof direction !== 'string') throw refuse('direction', 'must be a string');
}

/** History params without the paging ones the schema does not declare itself (they are always allowed). */
function ownParams(capability: ResolvedCapability, params: Record<string, unknown>): Record<string, unknown> {
  const declared = isObject(capability.schema.properties) ? capability.schema.properties : {};
  const own = { ...params };
  for (const name of PAGING) if (!(name in declared)) delete own[name];
  return own;
}

function callContext(
  capability: ResolvedCapability,
  call: VerifiedCall,
  request: RuntimeRequest,
  body: Record<string, unknown>,
): CallContext {
  const context = isObject(body.context) ? body.context : {};
  const header = (name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  return {
    ...call,
    capability: capability.name,
    mode: capability.type,
    locale: typeof context.locale === 'string' ? context.locale : 'en',
    timezone: typeof context.timezone === 'string' ? context.timezone : 'UTC',
    idempotencyKey: header('x-service-idempotency-key') || undefined,
    confirmationId: typeof context.confirmationId === 'string' ? context.confirmationId : undefined,
    headers: request.headers,
    rawBody: request.body,
  };
}

const isEnvelope = <T extends object>(value: T): value is Extract<T, { status: unknown }> =>
  isObject(value) && (value.status === 'ok' || value.status === 'degraded');

function historyReply(returned: Awaited<ReturnType<HistoryHandler>>) {
  return isEnvelope(returned) ? returned : historyAnswer(returned.items, { next: returned.next, totalCount: returned.totalCount });
}

/** `defineRuntime({ descriptor, serviceUrl, appId, handlers })`: the runtime, ready for an adapter (`listener()`, Fastify, Express). */
export function defineRuntime<const D extends PackageDescriptor>(options: RuntimeOptions<D>): Runtime<D> {
  return new Runtime(options);
}
