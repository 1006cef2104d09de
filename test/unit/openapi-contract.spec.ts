import { OpenApiContract } from '../support/openapi-contract';

const document = {
  openapi: '3.0.0',
  paths: {
    '/v1/things/{id}': {
      get: {
        operationId: 'ThingsController_get',
        responses: {
          '200': {
            description: 'ok',
            headers: { 'X-Service-Request-Id': { $ref: '#/components/headers/X-Service-Request-Id' } },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ThingDto' } } },
          },
          '404': { description: 'no', content: { 'application/json': { schema: { $ref: '#/components/schemas/ApiErrorDto' } } } },
        },
      },
    },
    '/v1/things/mine': {
      get: { operationId: 'ThingsController_mine', responses: { '204': { description: 'none' } } },
    },
  },
  components: {
    headers: { 'X-Service-Request-Id': { required: true, schema: { type: 'string' } } },
    schemas: {
      ThingDto: {
        type: 'object',
        required: ['id', 'note'],
        properties: {
          id: { type: 'string' },
          note: { type: 'string', nullable: true },
          kind: { type: 'string', enum: ['a'], nullable: true },
        },
      },
      ApiErrorDto: {
        type: 'object',
        required: ['error'],
        properties: { error: { type: 'object', required: ['code'], properties: { code: { type: 'string' } } } },
      },
      ProblemDetailsDto: {
        type: 'object',
        required: ['type', 'status'],
        properties: { type: { type: 'string' }, status: { type: 'integer' } },
      },
    },
  },
};

const json = { 'content-type': 'application/json; charset=utf-8', 'x-service-request-id': 'req_12345678' };

describe('OpenApiContract', () => {
  const contract = new OpenApiContract(document);

  it('accepts a documented status, header and body, null where the schema is nullable', () => {
    expect(contract.check('GET', '/v1/things/t1', { status: 200, headers: json, body: { id: 't1', note: null, kind: null } })).toEqual([]);
  });

  it('prefers the literal template over a parameter', () => {
    expect(contract.check('GET', '/v1/things/mine', { status: 204, headers: {}, text: '' })).toEqual([]);
  });

  it('names the operation, the status and the schema path of a body that does not match', () => {
    const problems = contract.check('GET', '/v1/things/t1', { status: 200, headers: json, body: { id: 1, note: 'x' } });
    expect(problems).toEqual([expect.stringContaining('GET /v1/things/{id} (ThingsController_get) → 200')]);
    expect(problems[0]).toContain('body/id must be string');
    expect(problems[0]).toContain('#/components/schemas/ThingDto');
  });

  it('refuses a status the operation does not document', () => {
    expect(contract.check('GET', '/v1/things/t1', { status: 409, headers: json, body: { error: { code: 'CONFLICT' } } })).toEqual([
      expect.stringContaining('→ 409: status not documented (documented: 200, 404)'),
    ]);
  });

  it('refuses a response without a required header', () => {
    const headers = { 'content-type': 'application/json' };
    expect(contract.check('GET', '/v1/things/t1', { status: 200, headers, body: { id: 't1', note: 'x' } })).toEqual([
      expect.stringContaining('required header X-Service-Request-Id missing'),
    ]);
  });

  it('refuses a body where the document describes none', () => {
    expect(contract.check('GET', '/v1/things/mine', { status: 204, headers: json, text: '{"a":1}', body: { a: 1 } })).toEqual([
      expect.stringContaining('where the document describes none'),
    ]);
  });

  it('reads problem+json bodies from the text supertest leaves unparsed', () => {
    expect(contract.check('GET', '/v1/things/t1', { status: 404, headers: json, text: '{"error":{}}', body: {} })).toEqual([
      expect.stringContaining("body/error must have required property 'code'"),
    ]);
  });

  it('accepts a 404 for an unrouted path in the envelope of its area, and nothing else there', () => {
    expect(contract.check('GET', '/v1/nowhere', { status: 404, headers: json, body: { error: { code: 'NOT_FOUND' } } })).toEqual([]);
    expect(
      contract.check('GET', '/v1/providers/nowhere', { status: 404, headers: json, body: { error: { code: 'NOT_FOUND' } } }).join('\n'),
    ).toContain("must have required property 'type'");
    expect(contract.check('GET', '/v1/nowhere', { status: 200, headers: json, body: {} })).toEqual([
      'GET /v1/nowhere: no operation in the OpenAPI document',
    ]);
  });
});
