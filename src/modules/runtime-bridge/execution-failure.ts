import { ProblemCode, ProblemError, ProblemExtras } from '../../common/errors/problem-error';

/**
 * A failed capability execution: a problem for the caller plus what the trace
 * and `capability.failed` need (the code to report, whether retries ran out).
 */
export class ExecutionFailure extends ProblemError {
  /**
   * Set when the runtime's answer is retryable and a retry is still allowed, but
   * the caller must make it: after this many milliseconds (queued work such as
   * state polls schedules it; a synchronous caller gets it as `Retry-After`).
   */
  retryInMs?: number;

  constructor(
    code: ProblemCode,
    detail: string,
    readonly errorCode: string,
    readonly retriesExhausted: boolean,
    extras: ProblemExtras = {},
    headers: Record<string, string> = {},
  ) {
    super(code, detail, extras, headers);
  }
}

/** Runtime error envelope codes (spec: Runtime error envelope) and the problem each becomes once retries are over. */
export const RUNTIME_CODE_PROBLEMS: Record<string, { problem: ProblemCode; retryable: boolean }> = {
  INVALID_PARAMS: { problem: 'bad_request', retryable: false },
  AUTH_EXPIRED: { problem: 'runtime_unavailable', retryable: true },
  /** The runtime refused the token as invalid (signature, issuer, audience, type): never retried, no fresh token (docs/runtime-auth.md). */
  AUTH_INVALID: { problem: 'runtime_unavailable', retryable: false },
  PERMISSION_DENIED: { problem: 'insufficient_scope', retryable: false },
  NOT_FOUND: { problem: 'not_found', retryable: false },
  CONFLICT: { problem: 'conflict', retryable: false },
  RATE_LIMITED: { problem: 'rate_limit_exceeded', retryable: true },
  INTERNAL_ERROR: { problem: 'execution_failed', retryable: true },
  UPSTREAM_UNAVAILABLE: { problem: 'runtime_unavailable', retryable: true },
};
