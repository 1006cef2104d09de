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

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  /** Sent as `Idempotency-Key` so a double click or a retry cannot create twice. */
  idempotencyKey?: string;
  headers?: Record<string, string>;
}

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

export async function request<T = Json>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
  let body: string | undefined;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body });
  } catch {
    throw new ApiFailure(0, 'network_error', 'The service could not be reached. Check your connection and try again.', null);
  }
  const text = await response.text();
  let parsed: unknown = null;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if (!response.ok) throw failureFrom(response.status, parsed, response.statusText);
  return parsed as T;
}

/** A fresh idempotency key for one user intent (one form submission). */
export function newIdempotencyKey(): string {
  return crypto.randomUUID();
}

/** Human text for any error thrown by `request` or by code around it. */
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
