import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ApiErrorDto, ProblemDetailsDto } from './error-schemas';

/** What each error status means, shared by both envelopes. */
export const ERROR_STATUS_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is malformed or fails validation',
  401: 'Missing, invalid or expired credentials',
  403: 'The credentials do not allow this',
  404: 'Not found (or not visible to the caller)',
  405: 'Method not allowed',
  409: 'Conflicts with the current state',
  410: 'Gone',
  413: 'The body is too large',
  415: 'Unsupported media type',
  422: 'Unprocessable',
  429: 'Rate limit exceeded; retry after `Retry-After` seconds',
  500: 'Unexpected server error',
  502: 'An upstream (provider runtime) failed',
  503: 'Temporarily unavailable (a dependency is down, or the service is shutting down)',
  504: 'An upstream (provider runtime) timed out',
};

export const USER_ERROR_MEDIA_TYPE = 'application/json';
export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

function errorResponses(statuses: number[], mediaType: string, model: typeof ApiErrorDto | typeof ProblemDetailsDto) {
  return applyDecorators(
    ApiExtraModels(model),
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: ERROR_STATUS_DESCRIPTIONS[status] ?? 'Error',
        content: { [mediaType]: { schema: { $ref: getSchemaPath(model) } } },
      }),
    ),
  );
}

/**
 * Documents error statuses of a user API route (or every route of a controller) with the
 * `{ error: { code, message, status } }` envelope. 401, 429, 500 and 503 are added to every
 * route by the document builder (src/common/openapi/document.ts), so list the route's own.
 */
export const UserApiErrors = (...statuses: number[]) => errorResponses(statuses, USER_ERROR_MEDIA_TYPE, ApiErrorDto);

/** Documents error statuses of a provider platform, OAuth or operator route with RFC 9457 problem details. */
export const PlatformProblems = (...statuses: number[]) => errorResponses(statuses, PROBLEM_MEDIA_TYPE, ProblemDetailsDto);
