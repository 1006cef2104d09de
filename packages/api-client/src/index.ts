/**
 * The one typed client of the service's API, shared by the console and the `soul` CLI: openapi-fetch over the
 * paths generated from the OpenAPI document, with retries that honour `Retry-After`, idempotency keys, cursor
 * pagination and one error class for both error envelopes.
 */
export type { components, operations, paths } from './api-schema';
export { bearer, createApiClient, idempotent, newIdempotencyKey, ok } from './client';
export type { ApiClient, ClientOptions, Schemas } from './client';
export { ApiFailure, failureFrom, networkFailure, REQUEST_ID_HEADER, retryAfterSeconds } from './errors';
export type { FailureDetails, FieldError } from './errors';
export { IDEMPOTENT_ROUTES } from './idempotent-routes';
export { paginate } from './pagination';
export type { CursorPage } from './pagination';
export { repeatable, retryingFetch } from './retry';
export type { RetryPolicy } from './retry';
