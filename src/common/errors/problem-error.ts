/**
 * Problem types of the provider platform (RFC 9457). The spec fixes the codes,
 * statuses and two titles; the other titles are ours and stay stable.
 */
export const PROBLEM_TYPES = {
  invalid_schema: { status: 400, title: 'Invalid Schema' },
  missing_field: { status: 400, title: 'Missing Required Field' },
  invalid_format: { status: 400, title: 'Invalid Format' },
  bad_request: { status: 400, title: 'Bad Request' },
  conformance_failed: { status: 400, title: 'Conformance Failed' },
  dimension_below_threshold: { status: 400, title: 'Dimension Below Threshold' },
  invalid_reset_token: { status: 400, title: 'Invalid Reset Token' },
  invalid_token: { status: 401, title: 'Invalid Token' },
  invalid_signature: { status: 401, title: 'Invalid Signature' },
  token_expired: { status: 401, title: 'Token Expired' },
  invalid_client: { status: 401, title: 'Invalid Client' },
  mfa_required: { status: 401, title: 'MFA Code Required' },
  invalid_credentials: { status: 401, title: 'Invalid Credentials' },
  invalid_grant: { status: 400, title: 'Invalid Grant' },
  unsupported_grant_type: { status: 400, title: 'Unsupported Grant Type' },
  insufficient_scope: { status: 403, title: 'Insufficient Scope' },
  account_suspended: { status: 403, title: 'Account Suspended' },
  email_not_verified: { status: 403, title: 'Email Not Verified' },
  not_found: { status: 404, title: 'Not Found' },
  method_not_allowed: { status: 405, title: 'Method Not Allowed' },
  conflict: { status: 409, title: 'Conflict' },
  payload_too_large: { status: 413, title: 'Payload Too Large' },
  unsupported_media_type: { status: 415, title: 'Unsupported Media Type' },
  rate_limit_exceeded: { status: 429, title: 'Rate Limit Exceeded' },
  burst_limit: { status: 429, title: 'Burst Limit' },
  internal_error: { status: 500, title: 'Internal Error' },
  execution_failed: { status: 500, title: 'Execution Failed' },
  runtime_unavailable: { status: 502, title: 'Runtime Unavailable' },
  service_unavailable: { status: 503, title: 'Service Unavailable' },
  capability_timeout: { status: 504, title: 'Capability Timeout' },
} as const;
export type ProblemCode = keyof typeof PROBLEM_TYPES;

export interface ProblemExtras {
  field?: string;
  schema_path?: string;
  [key: string]: unknown;
}

/** A provider platform failure, rendered as `application/problem+json`. */
export class ProblemError extends Error {
  readonly status: number;
  readonly title: string;
  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly extras: ProblemExtras = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'ProblemError';
    this.status = PROBLEM_TYPES[code].status;
    this.title = PROBLEM_TYPES[code].title;
  }
}
