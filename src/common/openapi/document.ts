import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type {
  ContentObject,
  HeaderObject,
  OperationObject,
  ParameterObject,
  ReferenceObject,
  ResponseObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { envelopeFor } from '../errors/envelope';
import { ERROR_STATUS_DESCRIPTIONS, PROBLEM_MEDIA_TYPE, USER_ERROR_MEDIA_TYPE } from './error-responses';
import { ApiErrorDto, ProblemDetailsDto } from './error-schemas';

/** The request id header as documented (HTTP header names are case-insensitive; src/common/http/request-id.ts sets it). */
const REQUEST_ID_HEADER = 'X-Service-Request-Id';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Tag descriptions: one line per area, shown in the reference and required by the lint. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  health: 'Liveness and readiness probes',
  metrics: 'Prometheus metrics of the process and the event backbone (metrics or operator bearer token)',
  auth: 'User login with an identity provider token, logout, sessions, the user profile and the service token keys',
  soul: "The user's soul record (traits and values)",
  privacy: 'Soul deletion, account deletion and personal data exports (GDPR Art. 15, 17, 20); what deletion keeps: docs/privacy.md',
  contacts: "The user's address book",
  groups: 'Groups of contacts',
  messages: 'Messages to contacts and groups, and history',
  agents: 'Agent actions (summaries, drafts, suggestions) and their status',
  marketplace: 'Published packages, installs and install authorisation',
  actions: 'Confirmation or cancellation of actions a capability asked the user to confirm',
  surfaces: 'Component models of installed packages per placement',
  'runtime bridge': 'Capability execution through the provider runtime',
  'provider account': 'Developer accounts: sign-up, verification, MFA and console login',
  'provider apps': 'Provider apps, client secrets and runtime settings',
  'provider packages': 'Packages, versions, validation, conformance, submission and publishing',
  'provider webhooks': 'Webhook profile, deliveries, replay and inbound provider events',
  oauth: 'OAuth 2.0 token endpoint of the provider platform',
  operator: 'Operator API: reviews, suspensions, user tiers and maintenance (operator bearer token)',
  gateway: 'Real-time events over WebSocket',
};

/** Builds the OpenAPI document of the api role (served at /docs/openapi.json and linted by `npm run lint`). */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Service API')
      .setDescription(
        'User API (`{ error: { code, message, status } }` errors) and provider platform (RFC 9457 problem details). ' +
          'Real-time events: WebSocket at `/v1/gateway?token=…`, full event reference under the `gateway` tag (docs/events.md).',
      )
      .setVersion('1')
      // Relative: the document is served by the service it describes, whatever PUBLIC_BASE_URL says.
      .addServer('/', 'This service')
      .addBearerAuth()
      .addBasicAuth({ type: 'http', scheme: 'basic', description: 'OAuth client authentication (RFC 6749 §2.3.1)' }, 'basic')
      .build(),
    { extraModels: [ApiErrorDto, ProblemDetailsDto] },
  );
  return completeDocument(document);
}

const ref = (path: string): ReferenceObject => ({ $ref: path });
const HEADERS = {
  requestId: ref(`#/components/headers/${REQUEST_ID_HEADER}`),
  limit: ref('#/components/headers/X-RateLimit-Limit'),
  remaining: ref('#/components/headers/X-RateLimit-Remaining'),
  reset: ref('#/components/headers/X-RateLimit-Reset'),
  retryAfter: ref('#/components/headers/Retry-After'),
};

const SHARED_HEADERS: Record<string, HeaderObject> = {
  [REQUEST_ID_HEADER]: {
    description: 'Id of this request (`req_` + alphanumerics); a well-formed id sent by the caller is kept',
    required: true,
    schema: { type: 'string', pattern: '^req_[A-Za-z0-9]{8,64}$' },
  },
  'X-RateLimit-Limit': { description: 'Requests allowed in the current window', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'When the window resets, in epoch seconds', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
};

/**
 * Adds what every operation shares, so a route cannot be left half documented: the error statuses any route of its
 * area can answer (with that area's envelope, see docs/decisions.md "Which error envelope for which path?"), the
 * request id header on every response, rate limit headers where a per-user or per-address limit applies, `Retry-After` on 429 and
 * 503, and one declaration per header parameter. Statuses a route answers for its own reasons are declared on the
 * route with `@UserApiErrors()` / `@PlatformProblems()`.
 */
export function completeDocument(document: OpenAPIObject): OpenAPIObject {
  document.components ??= {};
  document.components.headers = { ...SHARED_HEADERS, ...document.components.headers };
  const tags = new Set<string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      for (const tag of operation.tags ?? []) tags.add(tag);
      completeOperation(path, method, operation);
    }
  }
  const known = new Map((document.tags ?? []).map((tag) => [tag.name, tag]));
  document.tags = [...tags].sort().map((name) => known.get(name) ?? { name, description: TAG_DESCRIPTIONS[name] ?? name });
  return document;
}

function completeOperation(path: string, method: (typeof METHODS)[number], operation: OperationObject): void {
  const problem = envelopeFor(path) === 'problem';
  const authenticated = (operation.security ?? []).some((requirement) => Object.keys(requirement).length > 0);
  // Per-user limits (user API) and per-address limits (anonymous sign-up and login routes) report X-RateLimit-*; the
  // platform's token limits and the operator API do not.
  const rateLimitHeaders = path.startsWith('/v1/') && !(problem && authenticated);
  const parameters = dedupeHeaderParameters(operation);
  // Path parameters count: an over-long or malformed one (bad percent-encoding) is refused with 400 before any lookup.
  // So does a body sent where none is expected: a method that may carry one parses it, and malformed JSON is a 400.
  const hasInput = operation.requestBody !== undefined || parameters.length > 0 || method !== 'get';

  const statuses = new Set<number>([500, 503]);
  if (hasInput) statuses.add(400);
  if (authenticated) statuses.add(401);
  // Platform bearer tokens can lack a scope (insufficient_scope); the operator API can be switched off.
  if (problem && (operation.security ?? []).some((requirement) => 'bearer' in requirement)) statuses.add(403);
  if (path.includes('{')) statuses.add(404);
  if (operation.requestBody) [413, 415].forEach((status) => statuses.add(status));
  if (path.startsWith('/v1/')) statuses.add(429);

  const errorContent: ContentObject = problem
    ? { [PROBLEM_MEDIA_TYPE]: { schema: ref(`#/components/schemas/${ProblemDetailsDto.name}`) } }
    : { [USER_ERROR_MEDIA_TYPE]: { schema: ref(`#/components/schemas/${ApiErrorDto.name}`) } };
  for (const status of statuses) {
    operation.responses[String(status)] ??= { description: ERROR_STATUS_DESCRIPTIONS[status] ?? 'Error' };
  }

  for (const [code, value] of Object.entries(operation.responses)) {
    if (!value || '$ref' in value) continue;
    const response: ResponseObject = value;
    const status = Number(code);
    if (status >= 400 && !response.content) response.content = errorContent;
    const headers: Record<string, HeaderObject | ReferenceObject> = { [REQUEST_ID_HEADER]: HEADERS.requestId };
    if (rateLimitHeaders && (status < 300 || status === 429)) {
      Object.assign(headers, {
        'X-RateLimit-Limit': HEADERS.limit,
        'X-RateLimit-Remaining': HEADERS.remaining,
        'X-RateLimit-Reset': HEADERS.reset,
      });
    }
    if (status === 429 || status === 503) headers['Retry-After'] = HEADERS.retryAfter;
    response.headers = { ...headers, ...response.headers };
  }
}

/**
 * A header named by both `@ApiHeader()` and a `@Headers()` parameter is declared twice (once required by default);
 * keep one declaration, required only when every declaration says so.
 */
function dedupeHeaderParameters(operation: OperationObject): ParameterObject[] {
  const kept: Array<ParameterObject | ReferenceObject> = [];
  for (const parameter of operation.parameters ?? []) {
    const twin =
      '$ref' in parameter
        ? undefined
        : kept.find(
            (p): p is ParameterObject =>
              !('$ref' in p) && p.in === 'header' && parameter.in === 'header' && p.name.toLowerCase() === parameter.name.toLowerCase(),
          );
    if (!twin || '$ref' in parameter) {
      kept.push(parameter);
      continue;
    }
    twin.required = Boolean(twin.required && parameter.required);
    twin.description ??= parameter.description;
    twin.schema ??= parameter.schema;
  }
  operation.parameters = kept;
  return kept.filter((p): p is ParameterObject => !('$ref' in p));
}
