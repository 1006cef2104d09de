import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, paths } from './api-schema';
import { ApiFailure, failureFrom, networkFailure } from './errors';
import { IDEMPOTENT_ROUTES } from './idempotent-routes';
import { retryingFetch, type RetryPolicy } from './retry';

/** Request and response bodies by schema name: `Schemas['AppDto']`. */
export type Schemas = components['schemas'];

/** The one typed client of the API: openapi-fetch over the paths generated from the OpenAPI document. */
export type ApiClient = Client<paths>;

export interface ClientOptions {
  /** The service's origin (`https://api.example.com`); empty in a page served by the service itself. */
  baseUrl?: string;
  /** The bearer token sent with every call (read at each call, so signing in or out takes effect at once). */
  token?: () => string | null | undefined;
  /** Called when the API answers 401 (the token expired or was revoked). */
  onUnauthorized?: () => void;
  /** Retries of 429, 503 and lost answers; `false` sends every call once. */
  retry?: RetryPolicy | false;
  /** Headers sent with every call (a `user-agent` naming the tool, for example). */
  headers?: Record<string, string>;
  /** The underlying fetch (default `globalThis.fetch`). */
  fetch?: (request: Request) => Promise<Response>;
}

/** A fresh idempotency key for one logical call (one form submission, one command). */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/** Headers of a call that must not happen twice, with a key the caller keeps (a double click, a resend later). */
export function idempotent(key: string): { 'idempotency-key': string } {
  return { 'idempotency-key': key };
}

/** Headers of a call made with a token other than the client's own (signing out a token already forgotten). */
export function bearer(token: string): { authorization: string } {
  return { authorization: `Bearer ${token}` };
}

/**
 * The session, the idempotency key of operations that take one (unless the call brings its own), the 401
 * notice, and a call that got no answer as `ApiFailure(0, 'network_error')`. The key is set here, once per call,
 * before the retrying fetch repeats the request: every retry of the call carries the same key.
 */
function conventions(options: ClientOptions): Middleware {
  return {
    onRequest({ request, schemaPath }) {
      const token = options.token?.();
      if (token && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`);
      if (IDEMPOTENT_ROUTES.has(`${request.method} ${schemaPath}`) && !request.headers.has('idempotency-key')) {
        request.headers.set('idempotency-key', newIdempotencyKey());
      }
      return request;
    },
    onResponse({ response }) {
      if (response.status === 401) options.onUnauthorized?.();
      return undefined;
    },
    onError({ error }) {
      return error instanceof ApiFailure ? error : networkFailure(error);
    },
  };
}

/** An openapi-fetch client over the generated `paths` with the conventions above; calls go through `ok()`. */
export function createApiClient(options: ClientOptions = {}): ApiClient {
  const base = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const client = createClient<paths>({
    baseUrl: options.baseUrl ?? '',
    headers: { accept: 'application/json', ...options.headers },
    fetch: options.retry === false ? base : retryingFetch(base, options.retry),
  });
  client.use(conventions(options));
  return client;
}

/**
 * The answer of one client call: its body on success (`null` when it has none), an `ApiFailure` otherwise.
 * `const { apps } = await ok(api.GET('/v1/providers/apps'))`.
 */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw failureFrom(response.status, error ?? null, response.headers, response.statusText);
  return (data === undefined ? null : data) as T;
}
