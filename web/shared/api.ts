import { ApiFailure, createApiClient as createSharedClient, type ApiClient, type ClientOptions } from '../../packages/api-client/src';

/**
 * The pages talk to the service only through its public HTTP API, like any other client, with the client the
 * CLI uses too (packages/api-client): the generated types, both error envelopes as one `ApiFailure` (status, code,
 * detail, field errors, request id), idempotency keys, retries of 429 and 503 honouring `Retry-After`. What is
 * left here belongs to the browser: how long a page may wait, where the token comes from, form values.
 */
export {
  ApiFailure,
  bearer,
  idempotent,
  newIdempotencyKey,
  ok,
  paginate,
  type ApiClient,
  type ClientOptions,
  type paths,
  type Schemas,
} from '../../packages/api-client/src';

/**
 * The shared client with a page's limits: a short wait at most before showing a refusal, and a call that got
 * no answer is not repeated here, because the pages own that case (the app's outbox resends with its own key and
 * shows "waiting for the connection"; the gateway reconnects).
 */
export function createApiClient(options: ClientOptions = {}): ApiClient {
  return createSharedClient({ retry: { retries: 2, maxDelayMs: 10_000, networkErrors: false }, ...options });
}

/** A client without a session: sign-in, account creation, public configuration. */
export const publicApi = createApiClient();

/** Human text for any error thrown by `ok` or by code around it. */
export function describeError(error: unknown): string {
  if (error instanceof ApiFailure) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The text fields of a submitted form, trimmed (files are ignored). */
export function formValues(form: HTMLFormElement): Record<string, string> {
  const values: Record<string, string> = {};
  new FormData(form).forEach((value, key) => {
    if (typeof value === 'string') values[key] = value.trim();
  });
  return values;
}
