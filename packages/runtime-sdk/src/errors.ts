/**
 * The runtime error envelope (spec: "Runtime error envelope"; docs/runtime-bridge.md,
 * "Errors"): the one shape a runtime answers a failure with, and the HTTP status
 * each code travels with. The service decides retries from `code`, so a code
 * is never sent with another status than the table's.
 */
export type RuntimeErrorCode =
  | 'INVALID_PARAMS'
  | 'AUTH_EXPIRED'
  | 'AUTH_INVALID'
  | 'PERMISSION_DENIED'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'RATE_LIMITED'
  | 'INTERNAL_ERROR'
  | 'UPSTREAM_UNAVAILABLE';

/** HTTP status and default `retryable` of every code, as the spec's table and docs/runtime-auth.md state them. */
export const RUNTIME_ERROR_CODES: Readonly<Record<RuntimeErrorCode, { status: number; retryable: boolean }>> = {
  INVALID_PARAMS: { status: 400, retryable: false },
  AUTH_EXPIRED: { status: 401, retryable: true },
  AUTH_INVALID: { status: 401, retryable: false },
  PERMISSION_DENIED: { status: 403, retryable: false },
  NOT_FOUND: { status: 404, retryable: false },
  CONFLICT: { status: 409, retryable: false },
  RATE_LIMITED: { status: 429, retryable: true },
  INTERNAL_ERROR: { status: 500, retryable: true },
  UPSTREAM_UNAVAILABLE: { status: 503, retryable: true },
};

export interface RuntimeErrorBody {
  status: 'error';
  error: {
    code: RuntimeErrorCode;
    message: string;
    retryable: boolean;
    /** Whole seconds the service should wait before retrying; it takes precedence over the service's backoff. */
    retryAfter?: number;
    /** The params or input field at fault (`params.account`, `input.amount`), for `INVALID_PARAMS`. */
    field?: string;
  };
}

export interface RuntimeErrorOptions {
  /** Overrides the code's default (the spec's table). */
  retryable?: boolean;
  /** Seconds; rounded up to a whole number, as the envelope carries integers. */
  retryAfter?: number;
  field?: string;
  cause?: unknown;
}

/**
 * A failure a handler throws to answer with the runtime error envelope:
 * `throw new RuntimeError('UPSTREAM_UNAVAILABLE', 'the bank is down', { retryAfter: 30 })`.
 * Anything else a handler throws is answered as `INTERNAL_ERROR` without its
 * message, so internal details never reach the service or its users.
 */
export class RuntimeError extends Error {
  readonly status: number;
  readonly retryable: boolean;
  readonly retryAfter?: number;
  readonly field?: string;

  constructor(
    readonly code: RuntimeErrorCode,
    message: string,
    options: RuntimeErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RuntimeError';
    const known = RUNTIME_ERROR_CODES[code];
    if (!known) throw new TypeError(`unknown runtime error code ${String(code)}`);
    this.status = known.status;
    this.retryable = options.retryable ?? known.retryable;
    if (options.retryAfter !== undefined) this.retryAfter = Math.max(0, Math.ceil(options.retryAfter));
    this.field = options.field;
  }

  /** The envelope this error answers with. */
  toBody(): RuntimeErrorBody {
    return errorEnvelope(this.code, this.message, { retryable: this.retryable, retryAfter: this.retryAfter, field: this.field });
  }
}

/** Builds the runtime error envelope; `retryable` defaults to the code's. */
export function errorEnvelope(code: RuntimeErrorCode, message: string, options: Omit<RuntimeErrorOptions, 'cause'> = {}): RuntimeErrorBody {
  const retryAfter = options.retryAfter === undefined ? undefined : Math.max(0, Math.ceil(options.retryAfter));
  return {
    status: 'error',
    error: {
      code,
      message,
      retryable: options.retryable ?? RUNTIME_ERROR_CODES[code].retryable,
      ...(retryAfter !== undefined ? { retryAfter } : {}),
      ...(options.field !== undefined ? { field: options.field } : {}),
    },
  };
}

/**
 * Raised in development when a handler's answer does not match the
 * capability's declared schema: the service would refuse it as
 * `execution_failed`, so the SDK says so where the mistake was made.
 */
export class AnswerSchemaError extends Error {
  constructor(
    readonly capability: string,
    readonly field: string,
    detail: string,
  ) {
    super(`${capability}: the answer does not match the declared schema: ${field} ${detail}`);
    this.name = 'AnswerSchemaError';
  }
}
