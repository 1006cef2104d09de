import { API_ERROR_STATUS, ApiErrorCode } from './api-error';
import { PROBLEM_TYPES, ProblemCode } from './problem-error';

/** What the error reference says about one code: what it means, when it happens, and what a client does next. */
export interface ErrorDoc {
  meaning: string;
  when: string;
  retry: string;
}

/**
 * The entries of the error reference (`/developers/errors`), one per provider platform problem type. Every problem
 * `type` URI (`{docs_url}/developers/errors#<code>`) lands on its entry, so a code added to `PROBLEM_TYPES` without
 * one here does not compile (and test/unit/problem-docs.spec.ts fails). Retry advice follows the spec's error table
 * where it gives one.
 */
export const PROBLEM_DOCS: Record<ProblemCode, ErrorDoc> = {
  invalid_schema: {
    meaning: 'A capability schema in the descriptor is malformed or unsupported.',
    when: 'A JSON Schema draft other than draft-07 or 2020-12, a circular `$ref`, an unsupported keyword (for example `if`/`then`/`else` in draft-07 mode), or a property without `type`. `schema_path` points at the offending place.',
    retry: 'Terminal: fix the descriptor and send it again.',
  },
  missing_field: {
    meaning: 'A required field is missing from the request body or from a capability response.',
    when: 'Field names are case-sensitive; `field` names the missing one.',
    retry: 'Terminal: add the field and send again.',
  },
  invalid_format: {
    meaning: 'A value has the wrong format.',
    when: 'A UUID that is not RFC 4122 lowercase with hyphens, a URL without a scheme, a date that is not ISO 8601, an enum value outside the declared set, or any field that fails its declared format. `field` names it.',
    retry: 'Terminal: correct the value.',
  },
  bad_request: {
    meaning: 'The request cannot be processed as sent.',
    when: 'Malformed JSON, an unknown or already used verification link, an operation the resource does not allow, or a request the more specific codes do not cover; `detail` says which.',
    retry: 'Terminal: change the request.',
  },
  conformance_failed: {
    meaning: 'The aggregate conformance score is below 80 of 100.',
    when: 'On submission (all six dimensions) or a full validation (`?full=true`). Local validation checks only three dimensions, so a submission can fail after local validation passed. The report lists each failed check.',
    retry: 'Terminal: fix the checks the report lists, then validate and submit again.',
  },
  dimension_below_threshold: {
    meaning: 'One conformance dimension scored below 5, which blocks submission even when the aggregate is 80 or more.',
    when: 'For example credentials detected in responses (the security dimension).',
    retry: 'Terminal: fix that dimension, then submit again.',
  },
  invalid_reset_token: {
    meaning: 'The password reset token is unknown, expired, already used or replaced by a newer one.',
    when: 'On `POST /v1/providers/account/password/reset/confirm`.',
    retry: 'Terminal: request a new reset mail and use the latest link.',
  },
  invalid_token: {
    meaning: 'The bearer token is missing, malformed, has a bad signature, was revoked, or is not the kind this route takes.',
    when: 'A token not issued by this service for this API (another audience, a user token), a tampered one, or one whose session has ended (logged out, secret rotated, account suspended).',
    retry: 'Terminal for this token: obtain a new one (log in again, or `POST /v1/auth/token`).',
  },
  invalid_signature: {
    meaning: 'The `X-Signature-256` of an inbound webhook is missing or does not match the raw body.',
    when: 'On `POST /v1/providers/runtime/webhook`: no header, no `sha256=` prefix, or an HMAC made with another secret or over different bytes.',
    retry: 'Terminal: sign the exact bytes you send with the app’s current webhook secret (see Webhook signatures).',
  },
  token_expired: {
    meaning: 'The access token has expired.',
    when: 'Access tokens live 1 hour by default; clock skew can make one expire early.',
    retry: 'Retry after refreshing the token (`POST /v1/auth/token` again).',
  },
  invalid_client: {
    meaning: 'The client credentials are unknown, wrong or malformed.',
    when: 'On `POST /v1/auth/token`: a bad HTTP Basic header, an unknown `client_id`, or a wrong `client_secret` (for example after the secret was rotated).',
    retry: 'Terminal: use the current client id and secret.',
  },
  mfa_required: {
    meaning: 'The developer account uses two-factor authentication and the code is missing, wrong or already used.',
    when: 'On `POST /v1/providers/auth/login`; `field` is `totp` when a code was sent.',
    retry: 'Send the current code from the authenticator app; a code is accepted once, so after a refusal for reuse wait for the next one.',
  },
  invalid_credentials: {
    meaning: 'The email address or password is not correct.',
    when: 'On `POST /v1/providers/auth/login`. Repeated failures are slowed down and may answer `rate_limit_exceeded`.',
    retry: 'Terminal: correct the credentials or reset the password.',
  },
  invalid_grant: {
    meaning: 'The grant (authorization code, PKCE verifier or refresh token) is invalid, expired or already used.',
    when: 'On `POST /v1/auth/token`.',
    retry: 'Terminal: start the authorization again.',
  },
  unsupported_grant_type: {
    meaning: 'The token endpoint does not support this `grant_type`.',
    when: 'On `POST /v1/auth/token` with a grant other than `client_credentials`, `authorization_code` or `refresh_token`.',
    retry: 'Terminal: use a supported grant.',
  },
  insufficient_scope: {
    meaning: 'The token lacks the required scope, the app lacks the scope, or the resource belongs to another developer.',
    when: '`detail` names the scope that is missing.',
    retry: 'Terminal: request a token with that scope (`scope` on `POST /v1/auth/token`) or act on your own resources.',
  },
  account_suspended: {
    meaning: 'The developer account or the package is suspended.',
    when: 'After an operator suspended it; suspended accounts cannot obtain tokens or change packages.',
    retry: 'Terminal: contact the operator.',
  },
  email_not_verified: {
    meaning: 'The developer account’s email address is not verified yet.',
    when: 'Creating apps or requesting app tokens before following the verification link.',
    retry: 'Follow the link in the verification mail (`POST /v1/providers/account/verify/resend` sends a new one), then retry.',
  },
  not_found: {
    meaning: 'The resource does not exist, or is not visible to this caller.',
    when: 'An unknown id, or an id of another developer’s resource where revealing it would leak its existence.',
    retry: 'Terminal: check the id.',
  },
  method_not_allowed: {
    meaning: 'The path exists but not with this HTTP method.',
    when: 'For example `DELETE` on a route that only reads.',
    retry: 'Terminal: use a method the OpenAPI document lists for the path.',
  },
  conflict: {
    meaning: 'The request conflicts with the current state of the resource.',
    when: 'A version moved out of order (publishing before approval, submitting twice), a taken slug or version string, or an `Idempotency-Key` reused with a different body. `current_state` says where the resource is when known.',
    retry: 'Terminal as sent: read the resource, then act on its current state.',
  },
  payload_too_large: {
    meaning: 'The request body is over the size limit (1 MiB).',
    when: 'Any request with a larger body.',
    retry: 'Terminal: send a smaller body.',
  },
  unsupported_media_type: {
    meaning: 'The `Content-Type` is not one this route accepts.',
    when: 'JSON routes take `application/json`; the token endpoint also takes `application/x-www-form-urlencoded`.',
    retry: 'Terminal: send the right content type.',
  },
  rate_limit_exceeded: {
    meaning: 'The sustained request rate of this app (or address, or capability) is exceeded.',
    when: 'Per-minute limits by tier (see the spec’s limits). The answer carries `Retry-After` and `X-RateLimit-*` headers.',
    retry: 'Retry after `Retry-After` seconds, with exponential backoff and jitter.',
  },
  burst_limit: {
    meaning: 'Too many requests in a short window.',
    when: 'More than the burst allowance (typically 10 requests per second) from one app.',
    retry: 'Retry after 1 to 2 seconds.',
  },
  internal_error: {
    meaning: 'An unexpected error in the service.',
    when: 'Never on purpose; the `X-Service-Request-Id` response header identifies the request for the operator.',
    retry: 'Retry with backoff; report it with the request id if it persists.',
  },
  execution_failed: {
    meaning: 'Your runtime’s handler failed.',
    when: 'It raised an error, returned non-JSON or the wrong content type, or its response does not match the declared `responseSchema`.',
    retry: 'Terminal: fix the handler.',
  },
  runtime_unavailable: {
    meaning: 'Your runtime could not be reached or did not answer with HTTP.',
    when: 'DNS failure, a firewall, a bad TLS certificate, a refused connection, or a target the service is not allowed to call.',
    retry: 'Retry with exponential backoff, at most 3 attempts.',
  },
  service_unavailable: {
    meaning: 'The service (or this instance) cannot serve the request right now.',
    when: 'During a shutdown or while a dependency is down; the answer may carry `Retry-After`.',
    retry: 'Retry after `Retry-After` seconds (or a short backoff).',
  },
  capability_timeout: {
    meaning: 'Your handler did not answer within the timeout.',
    when: 'The timeout is 10 s (Free), 15 s (Pro) or 30 s (Enterprise).',
    retry: 'Retry once after 2 to 5 seconds.',
  },
};

/** The user API envelope's codes (`{ error: { code, message, status } }`): a section of the same page. */
export const API_ERROR_DOCS: Record<ApiErrorCode, ErrorDoc> = {
  BAD_REQUEST: {
    meaning: 'The request is malformed or fails validation.',
    when: 'Missing or wrong fields, bad query parameters, malformed JSON.',
    retry: 'Terminal: fix the request.',
  },
  UNAUTHORIZED: {
    meaning: 'No valid user token.',
    when: 'Missing, expired or revoked access token, or an ended session.',
    retry: 'Log in again (`POST /v1/auth/login`), then retry.',
  },
  FORBIDDEN: {
    meaning: 'The token is valid but may not do this.',
    when: 'A missing scope or role, or a resource of another user.',
    retry: 'Terminal.',
  },
  NOT_FOUND: { meaning: 'No such resource (for this user).', when: 'An unknown id or path.', retry: 'Terminal.' },
  METHOD_NOT_ALLOWED: { meaning: 'The path does not take this method.', when: 'Any route.', retry: 'Terminal.' },
  CONFLICT: {
    meaning: 'The request conflicts with the current state.',
    when: 'A duplicate, or an `Idempotency-Key` reused with a different body.',
    retry: 'Terminal as sent: read the current state first.',
  },
  GONE: { meaning: 'The resource existed but is no longer available.', when: 'For example an expired export.', retry: 'Terminal.' },
  PAYLOAD_TOO_LARGE: { meaning: 'The body is over the size limit.', when: 'Bodies over 1 MiB.', retry: 'Terminal.' },
  UNSUPPORTED_MEDIA_TYPE: { meaning: 'The content type is not accepted.', when: 'A body that is not JSON.', retry: 'Terminal.' },
  RATE_LIMITED: {
    meaning: 'Too many requests.',
    when: 'Per-tier limits per minute and per day; `X-RateLimit-*` headers say where you are.',
    retry: 'Retry after `Retry-After` seconds.',
  },
  INTERNAL_ERROR: { meaning: 'An unexpected server error.', when: 'Never on purpose.', retry: 'Retry with backoff.' },
  SERVICE_UNAVAILABLE: {
    meaning: 'The service cannot serve the request right now.',
    when: 'During a shutdown or while a dependency is down.',
    retry: 'Retry after `Retry-After` seconds.',
  },
};

function entries<C extends string>(codes: Record<C, { status: number; title?: string }>, docs: Record<C, ErrorDoc>): string {
  return (Object.keys(codes) as C[])
    .map((code) => {
      const { status, title } = codes[code];
      const doc = docs[code];
      return [
        `### ${code}`,
        '',
        `**${status}${title ? ` ${title}` : ''}**. ${doc.meaning}`,
        '',
        `- **When:** ${doc.when}`,
        `- **Retry:** ${doc.retry}`,
        '',
      ].join('\n');
    })
    .join('\n');
}

/** The generated part of the errors page: one entry per problem type, then the user API codes. */
export function errorReferenceMarkdown(): string {
  const apiCodes = Object.fromEntries(Object.entries(API_ERROR_STATUS).map(([code, status]) => [code, { status }])) as Record<
    ApiErrorCode,
    { status: number }
  >;
  return [
    '## Provider platform problem types',
    '',
    'Answers of `/v1/providers/…` and `/v1/auth/token` are `application/problem+json`; their `type` is a link to the entry below.',
    '',
    entries(PROBLEM_TYPES, PROBLEM_DOCS),
    '## User API error codes',
    '',
    'The user API (`/v1/…` outside the provider platform) answers `{ "error": { "code", "message", "status" } }`; `code` is one of these.',
    '',
    entries(apiCodes, API_ERROR_DOCS),
  ].join('\n');
}
