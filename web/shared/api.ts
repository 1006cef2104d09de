import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './api-schema';

/**
 * The pages talk to the service only through its public HTTP API, like any
 * other client. Both error envelopes become one `ApiFailure`:
 *   user API           { error: { code, message, status } }
 *   provider platform  application/problem+json { type, title, status, detail, code? }
 */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
    this.name = 'ApiFailure';
  }
}

/** The API's paths and bodies, generated from its OpenAPI document (`npm run api:generate`). */
export type { paths } from './api-schema';
/** Request and response bodies by schema name: `Schemas['AppDto']`. */
export type Schemas = components['schemas'];

/** The one typed client of the API (openapi-fetch over the generated paths), bound to a token source. */
export type ApiClient = Client<paths>;

type Json = Record<string, unknown>;

function text(value: unknown, fallback: string | number): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : String(fallback);
}

function failureFrom(status: number, body: unknown, statusText: string): ApiFailure {
  if (body && typeof body === 'object') {
    const envelope = (body as { error?: Json }).error;
    if (envelope && typeof envelope === 'object') {
      return new ApiFailure(status, text(envelope.code, status), text(envelope.message, statusText), body);
    }
    const problem = body as Json;
    if ('title' in problem || 'detail' in problem) {
      const code = text(problem.code ?? problem.error ?? problem.title, status);
      return new ApiFailure(status, code, text(problem.detail ?? problem.title, statusText), body);
    }
  }
  return new ApiFailure(status, String(status), statusText || `Request failed with status ${status}`, body);
}

export interface ClientOptions {
  /** The bearer token sent with every call (read at each call, so signing in or out takes effect at once). */
  token?: () => string | null | undefined;
  /** Called when the API answers 401 (the token expired or was revoked). */
  onUnauthorized?: () => void;
}

/**
 * An openapi-fetch client over the generated `paths`, with today's conventions: JSON accepted, the bearer token
 * unless the call sets its own `authorization`, and an unreachable service as `ApiFailure(0, 'network_error')`.
 * Calls go through `ok()`, which turns either error envelope into an `ApiFailure`.
 */
export function createApiClient(options: ClientOptions = {}): ApiClient {
  const client = createClient<paths>({ headers: { accept: 'application/json' } });
  client.use({
    onRequest({ request }) {
      const token = options.token?.();
      if (token && !request.headers.has('authorization')) request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
    onResponse({ response }) {
      if (response.status === 401) options.onUnauthorized?.();
      return undefined;
    },
    onError() {
      return new ApiFailure(0, 'network_error', 'The service could not be reached. Check your connection and try again.', null);
    },
  });
  return client;
}

/** A client without a session: sign-in, account creation, public configuration. */
export const publicApi = createApiClient();

/**
 * The answer of one client call: its body on success (`null` when it has none), an `ApiFailure` otherwise.
 * `const { apps } = await ok(api.GET('/v1/providers/apps'))`.
 */
export async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw failureFrom(response.status, error ?? null, response.statusText);
  return (data === undefined ? null : data) as T;
}

/** Headers of a call that must not happen twice (`Idempotency-Key`: a double click or a retry cannot create twice). */
export function idempotent(key: string): { 'idempotency-key': string } {
  return { 'idempotency-key': key };
}

/** Headers of a call made with a token other than the session's (signing out a token already forgotten). */
export function bearer(token: string): { authorization: string } {
  return { authorization: `Bearer ${token}` };
}

/** A fresh idempotency key for one user intent (one form submission). */
export function newIdempotencyKey(): string {
  return crypto.randomUUID();
}

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
