/** The response header carrying the id the service gave a request (the key to its logs and to support). */
export const REQUEST_ID_HEADER = 'x-service-request-id';

/** One refused field of a request: a problem's `errors` list (or its single `field`), in the service's words. */
export interface FieldError {
  /** Dotted path of the field (`capabilities[0].schema`); empty for the body as a whole. */
  field: string;
  message: string;
  /** The check that refused it (`unknown_field`, `invalid_format`, …) when the service names one. */
  code?: string;
  /** Where in the descriptor schema the rule lives, for descriptor errors. */
  schemaPath?: string;
}

export interface FailureDetails {
  /** The problem's `title`; for the user API envelope, its code. */
  title?: string;
  fieldErrors?: FieldError[];
  /** `X-Service-Request-Id` of the answer: quote it to find the call in the service's logs. */
  requestId?: string | null;
  /** Seconds the service asked to wait (`Retry-After`) before trying again. */
  retryAfterSeconds?: number | null;
}

/**
 * A refused or failed call, whatever envelope the service answered with:
 *   user API           { error: { code, message, status } }
 *   provider platform  application/problem+json (RFC 9457) { type, title, status, detail, field?, errors? }
 * `code` is the stable machine code (the user API's `code`, the fragment of a problem's `type`), `message` the
 * human detail. Status 0 with code `network_error` means no answer came back at all.
 */
export class ApiFailure extends Error {
  readonly title: string;
  readonly fieldErrors: FieldError[];
  readonly requestId: string | null;
  readonly retryAfterSeconds: number | null;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown,
    details: FailureDetails = {},
  ) {
    super(message);
    this.name = 'ApiFailure';
    this.title = details.title ?? code;
    this.fieldErrors = details.fieldErrors ?? [];
    this.requestId = details.requestId ?? null;
    this.retryAfterSeconds = details.retryAfterSeconds ?? null;
  }

  /** The human detail (the same as `message`), under the problem-details name. */
  get detail(): string {
    return this.message;
  }

  /** A plain object for logs and `--json` output (an Error's own fields do not survive JSON.stringify). */
  toJSON(): Record<string, unknown> {
    return {
      status: this.status,
      code: this.code,
      title: this.title,
      detail: this.message,
      field_errors: this.fieldErrors,
      request_id: this.requestId,
      ...(this.retryAfterSeconds !== null ? { retry_after_seconds: this.retryAfterSeconds } : {}),
    };
  }
}

type Json = Record<string, unknown>;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined;
}

/** `Retry-After` as seconds from now: delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

function problemFieldErrors(problem: Json, detail: string): FieldError[] {
  const list = problem.errors;
  if (Array.isArray(list)) {
    return list
      .filter((item): item is Json => !!item && typeof item === 'object')
      .map((item) => ({
        field: text(item.field) ?? '',
        message: text(item.message) ?? 'invalid value',
        ...(text(item.code) ? { code: text(item.code) } : {}),
        ...(text(item.schema_path) ? { schemaPath: text(item.schema_path) } : {}),
      }));
  }
  const field = text(problem.field);
  return field ? [{ field, message: detail, ...(text(problem.schema_path) ? { schemaPath: text(problem.schema_path) } : {}) }] : [];
}

/** The stable code of a problem: the fragment of its `type` URI (`…/developers/errors#mfa_required`). */
function problemCode(problem: Json): string | undefined {
  const type = text(problem.type);
  if (type?.includes('#')) return type.slice(type.indexOf('#') + 1);
  return text(problem.code);
}

/**
 * The `ApiFailure` of a non-2xx answer, from its parsed body (openapi-fetch's `error`: JSON when it was JSON,
 * else the text) and its headers.
 */
export function failureFrom(status: number, body: unknown, headers: Headers | null, statusText = ''): ApiFailure {
  const context = {
    requestId: headers?.get(REQUEST_ID_HEADER) ?? null,
    retryAfterSeconds: retryAfterSeconds(headers?.get('retry-after') ?? null),
  };
  const fallback = statusText || `Request failed with status ${status}`;
  if (body && typeof body === 'object') {
    const envelope = (body as { error?: unknown }).error;
    if (envelope && typeof envelope === 'object') {
      const error = envelope as Json;
      const code = text(error.code) ?? String(status);
      return new ApiFailure(status, code, text(error.message) ?? fallback, body, { ...context, title: code });
    }
    const problem = body as Json;
    if ('title' in problem || 'detail' in problem || 'type' in problem) {
      const detail = text(problem.detail) ?? text(problem.title) ?? fallback;
      const code = problemCode(problem) ?? text(problem.title) ?? String(status);
      return new ApiFailure(status, code, detail, body, {
        ...context,
        title: text(problem.title) ?? code,
        fieldErrors: problemFieldErrors(problem, detail),
      });
    }
  }
  return new ApiFailure(status, String(status), fallback, body ?? null, context);
}

/** No answer at all: the service could not be reached, or the connection broke before a response came. */
export function networkFailure(cause: unknown): ApiFailure {
  const failure = new ApiFailure(0, 'network_error', 'The service could not be reached. Check your connection and try again.', null);
  (failure as { cause?: unknown }).cause = cause;
  return failure;
}
