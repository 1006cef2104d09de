import { API_ERROR_STATUS, ApiErrorCode } from './api-error';
import { PROBLEM_TYPES, ProblemCode } from './problem-error';

/** Which error envelope a path answers with. */
export type EnvelopeKind = 'user' | 'problem';

const PROBLEM_PATHS = [/^\/v1\/providers(\/|$)/, /^\/v1\/auth\/token\/?$/, /^\/v1\/operator(\/|$)/];

export function envelopeFor(url: string): EnvelopeKind {
  const path = url.split('?')[0];
  return PROBLEM_PATHS.some((re) => re.test(path)) ? 'problem' : 'user';
}

/** Default code in each vocabulary for a bare HTTP status. */
export function userCodeForStatus(status: number): ApiErrorCode {
  const exact = (Object.keys(API_ERROR_STATUS) as ApiErrorCode[]).find((code) => API_ERROR_STATUS[code] === status);
  if (exact) return exact;
  return status >= 500 ? 'INTERNAL_ERROR' : 'BAD_REQUEST';
}

const PROBLEM_FOR_STATUS: Record<number, ProblemCode> = {
  400: 'bad_request',
  401: 'invalid_token',
  403: 'insufficient_scope',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limit_exceeded',
  502: 'runtime_unavailable',
  503: 'service_unavailable',
  504: 'capability_timeout',
};

export function problemCodeForStatus(status: number): ProblemCode {
  return PROBLEM_FOR_STATUS[status] ?? (status >= 500 ? 'internal_error' : 'bad_request');
}

export function problemTitle(code: string): string {
  return (PROBLEM_TYPES as Record<string, { title: string }>)[code]?.title ?? 'Error';
}
