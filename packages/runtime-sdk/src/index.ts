/**
 * @soul-service/runtime-sdk: build a provider runtime for the service.
 * `defineRuntime` serves the capability routes, verifies every call's runtime
 * token, checks params against the descriptor and answers the mode's envelope.
 * The test kit is `@soul-service/runtime-sdk/testing`.
 */
export { defineRuntime, Runtime } from './runtime';
export type { RuntimeOptions, RuntimeReply, RuntimeRequest } from './runtime';
export type {
  ActionHandler,
  ActionReturn,
  CallContext,
  Handlers,
  HistoryHandler,
  HistoryReturn,
  PagingParams,
  ParamsOf,
  RealtimeHandler,
  ResultOf,
  StateHandler,
  StateReturn,
} from './handlers';
export { fullSchema, resolveCapabilities } from './descriptor';
export type { CapabilityDescriptor, CapabilityMode, FromSchema, JsonSchema, PackageDescriptor, ResolvedCapability } from './descriptor';
export { actionAnswer, degradedAnswer, historyAnswer, stateAnswer } from './envelopes';
export type { ActionAnswer, DegradedAnswer, HistoryAnswer, StateAnswer } from './envelopes';
export { AnswerSchemaError, errorEnvelope, RUNTIME_ERROR_CODES, RuntimeError } from './errors';
export type { RuntimeErrorBody, RuntimeErrorCode, RuntimeErrorOptions } from './errors';
export { LOCAL_JWKS_ENV, LOCAL_TOKEN_ISSUER, RUNTIME_TOKEN_TYPE, RuntimeTokenVerifier } from './verify';
export type { IncomingHeaders, RuntimeTokenClaims, VerifiedCall, VerifierOptions } from './verify';
export { canonicalJson, DEFAULT_IDEMPOTENCY_TTL_MS, inputFingerprint, MemoryIdempotencyStore, RedisIdempotencyStore } from './idempotency';
export type { IdempotencyRecord, IdempotencyStore, RedisLike, StoredAnswer } from './idempotency';
export { openEventStream } from './sse';
export type { EventStream, EventStreamOptions } from './sse';
export { decodeCursor, encodeCursor, pageOf } from './cursor';
export { expressMiddleware, fastifyPlugin, nodeListener, readBody, writeReply } from './adapters';
export type {
  ExpressMiddleware,
  FastifyInstanceLike,
  RequestAnswerer,
  FastifyPluginLike,
  NodeAdapterOptions,
  NodeListener,
} from './adapters';
export { WebhookReceiver } from './webhook-receiver';
export type { DeliveredEvent, DeliveryContext, WebhookReceiverOptions } from './webhook-receiver';
export {
  createServiceEvents,
  SERVICE_EVENTS_MAX_ATTEMPTS,
  SERVICE_EVENTS_PATH,
  SERVICE_EVENTS_SCOPE,
  SERVICE_REQUEST_ID_HEADER,
  SERVICE_TOKEN_PATH,
  ServiceEventError,
  ServiceEvents,
} from './service-events';
export type {
  EventType,
  EventTypesOf,
  ServiceEvent,
  ServiceEventAck,
  ServiceEventFieldError,
  ServiceEventInput,
  ServiceEventsOptions,
} from './service-events';
