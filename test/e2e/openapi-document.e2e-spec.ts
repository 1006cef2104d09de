import { ModulesContainer } from '@nestjs/core';
import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import request from 'supertest';
import { envelopeFor } from '../../src/common/errors/envelope';
import { TestEnvironment } from '../support/harness';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- an OpenAPI document, read loosely
interface Operation {
  name: string;
  path: string;
  method: string;
  operation: Json;
}

/** Successes that carry no body by design: 204, the WebSocket upgrade, and the export download (a file). */
const NO_BODY_SUCCESS = new Set([
  'POST /v1/auth/logout 204',
  'POST /v1/providers/auth/logout 204',
  'DELETE /v1/contacts/{id} 204',
  'DELETE /v1/groups/{id} 204',
  'DELETE /v1/sessions/{session_id} 204',
  'DELETE /v1/providers/apps/{app_id}/webhook/endpoints/{endpoint_id} 204',
  'GET /v1/gateway 101',
]);
const FILE_SUCCESS = new Set(['GET /v1/exports/{export_id} 200']);
/** Failures that answer a body of their own instead of an error envelope: readiness reports which dependency is down. */
const OWN_ERROR_BODY = new Set(['GET /health/ready 503']);

/** Guards that authenticate the caller (user, platform, operator or capability caller tokens). */
const AUTH_GUARD = /Auth|Operator|Caller/;

/** What the handlers declare, read from Nest's route metadata: which take a body and which are guarded. */
interface HandlerFacts {
  takesBody: boolean;
  guarded: boolean;
}

describe('the OpenAPI document as a contract', () => {
  let env: TestEnvironment;
  let document: Json;
  let operations: Operation[];
  const handlers = new Map<string, HandlerFacts>();

  beforeAll(async () => {
    env = await TestEnvironment.create();
    const { app, url } = await env.startApi();
    document = (await request(url).get('/docs/openapi.json').expect(200)).body as Json;
    operations = Object.entries(document.paths as Record<string, Json>).flatMap(([path, item]) =>
      ['get', 'put', 'post', 'patch', 'delete']
        .filter((m) => item[m])
        .map((method) => ({
          name: `${method.toUpperCase()} ${path} (${item[method].operationId})`,
          path,
          method,
          operation: item[method] as Json,
        })),
    );
    for (const module of app.get(ModulesContainer).values()) {
      for (const wrapper of module.controllers.values()) {
        const controller = wrapper.metatype as (new (...args: unknown[]) => unknown) | null;
        if (!controller || Reflect.getMetadata(PATH_METADATA, controller) === undefined) continue;
        const classGuards = (Reflect.getMetadata(GUARDS_METADATA, controller) as unknown[] | undefined) ?? [];
        for (const key of Object.getOwnPropertyNames(controller.prototype)) {
          const handler = (controller.prototype as Record<string, unknown>)[key];
          if (key === 'constructor' || typeof handler !== 'function' || Reflect.getMetadata(METHOD_METADATA, handler) === undefined)
            continue;
          const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, key) as Record<string, unknown> | undefined) ?? {};
          const guards = [...classGuards, ...((Reflect.getMetadata(GUARDS_METADATA, handler) as unknown[] | undefined) ?? [])];
          handlers.set(`${controller.name}_${key}`, {
            takesBody: Object.keys(args).some((arg) => arg.split(':')[0] === String(RouteParamtypes.BODY)),
            // Authentication guards only: the per-address limit on anonymous routes (AddressRateLimitGuard) authenticates nobody.
            guarded: guards.some((guard) => AUTH_GUARD.test((guard as { name?: string }).name ?? '')),
          });
        }
      }
    }
  });
  afterAll(() => env.close());

  const failing = (check: (op: Operation) => string | null) =>
    operations.map(check).filter((problem): problem is string => problem !== null);
  const responses = (op: Operation) => Object.entries(op.operation.responses as Record<string, Json>);
  const schemaOf = (response: Json) =>
    Object.values((response.content ?? {}) as Record<string, Json>).find((media) => media.schema)?.schema;

  it('describes every route Nest serves', () => {
    expect(operations.length).toBeGreaterThan(70);
    const documented = new Set(operations.map((op) => op.operation.operationId as string));
    expect([...handlers.keys()].filter((id) => !documented.has(id))).toEqual([]);
  });

  it('gives every operation a summary and a tag', () => {
    expect(failing((op) => (op.operation.summary && op.operation.tags?.length ? null : op.name))).toEqual([]);
  });

  it('documents a success response with a body schema for every operation', () => {
    expect(
      failing((op) => {
        const successes = responses(op).filter(([status]) => /^[123]/.test(status));
        if (successes.length === 0) return `${op.name}: no success response`;
        const missing = successes.filter(([status, response]) => {
          const key = `${op.method.toUpperCase()} ${op.path} ${status}`;
          if (NO_BODY_SUCCESS.has(key)) return false;
          if (FILE_SUCCESS.has(key)) return !response.content;
          return !schemaOf(response);
        });
        return missing.length ? `${op.name}: ${missing.map(([s]) => s).join(', ')} without a body schema` : null;
      }),
    ).toEqual([]);
  });

  it("documents error responses with the envelope of the operation's area", () => {
    expect(
      failing((op) => {
        const problem = envelopeFor(op.path) === 'problem';
        const [mediaType, schema] = problem
          ? ['application/problem+json', '#/components/schemas/ProblemDetailsDto']
          : ['application/json', '#/components/schemas/ApiErrorDto'];
        const errors = responses(op).filter(([status]) => /^[45]/.test(status));
        // Probes and public key sets (/health, /.well-known) take no input and no credentials: no client error to document.
        if (op.path.startsWith('/v1/') && !errors.some(([status]) => status.startsWith('4'))) return `${op.name}: no 4xx response`;
        const wrong = errors.filter(
          ([status, response]) =>
            !OWN_ERROR_BODY.has(`${op.method.toUpperCase()} ${op.path} ${status}`) &&
            response.content?.[mediaType]?.schema?.$ref !== schema,
        );
        return wrong.length ? `${op.name}: ${wrong.map(([s]) => s).join(', ')} not ${mediaType} ${schema}` : null;
      }),
    ).toEqual([]);
  });

  it('documents 429, 500 and 503 on every /v1 operation, and 401 on every authenticated one', () => {
    expect(
      failing((op) => {
        const statuses = Object.keys(op.operation.responses as Json);
        const needed = ['500', '503', ...(op.path.startsWith('/v1/') ? ['429'] : []), ...(op.operation.security?.length ? ['401'] : [])];
        const missing = needed.filter((status) => !statuses.includes(status));
        return missing.length ? `${op.name}: missing ${missing.join(', ')}` : null;
      }),
    ).toEqual([]);
  });

  it('documents a request body wherever the handler reads one', () => {
    expect(
      failing((op) => (handlers.get(op.operation.operationId as string)?.takesBody && !op.operation.requestBody ? op.name : null)),
    ).toEqual([]);
  });

  it('names a security scheme on every guarded route, and only schemes the document defines', () => {
    const schemes = Object.keys((document.components?.securitySchemes ?? {}) as Json);
    expect(
      failing((op) => {
        const security = (op.operation.security ?? []) as Json[];
        if (handlers.get(op.operation.operationId as string)?.guarded && security.length === 0) return `${op.name}: no security`;
        const unknown = security.flatMap((requirement) => Object.keys(requirement)).filter((name) => !schemes.includes(name));
        return unknown.length ? `${op.name}: unknown scheme ${unknown.join(', ')}` : null;
      }),
    ).toEqual([]);
  });

  it('documents X-Service-Request-Id on every response, and Retry-After on every 429', () => {
    expect(
      failing((op) => {
        const missing = responses(op).flatMap(([status, response]) => {
          const headers = Object.keys((response.headers ?? {}) as Json).map((h) => h.toLowerCase());
          return [
            ...(headers.includes('x-service-request-id') ? [] : [`${status} X-Service-Request-Id`]),
            ...(status === '429' && !headers.includes('retry-after') ? [`${status} Retry-After`] : []),
          ];
        });
        return missing.length ? `${op.name}: ${missing.join(', ')}` : null;
      }),
    ).toEqual([]);
  });

  it('documents the X-RateLimit headers on the successes of the rate-limited user API', () => {
    expect(
      failing((op) => {
        if (envelopeFor(op.path) !== 'user' || !op.path.startsWith('/v1/') || !op.operation.security?.length) return null;
        const bare = responses(op).filter(
          ([status, response]) =>
            status.startsWith('2') && !Object.keys((response.headers ?? {}) as Json).includes('X-RateLimit-Remaining'),
        );
        return bare.length ? `${op.name}: ${bare.map(([s]) => s).join(', ')}` : null;
      }),
    ).toEqual([]);
  });

  it('declares each header parameter once', () => {
    expect(
      failing((op) => {
        const names = ((op.operation.parameters ?? []) as Json[]).filter((p) => p.in === 'header').map((p) => String(p.name).toLowerCase());
        return names.length === new Set(names).size ? null : `${op.name}: ${names.join(', ')}`;
      }),
    ).toEqual([]);
  });
});
