import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import request from 'supertest';
import { TestEnvironment } from '../support/harness';
import { appToken, onboardDeveloper, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';

const problemType = (code: string) => `https://docs.example.com/developers/errors#${code}`;
const SCHEMA_PATH = '/v1/providers/descriptor.schema.json';

const state = {
  type: 'state',
  name: 'balance',
  description: 'Current account balance for the dashboard widget',
  schema: { type: 'object', properties: { account: { type: 'string', description: 'Account id' } }, required: ['account'] },
  surfaceGuidance: { intent: 'ambient_context', placement: ['home_widgets'], preferredComponents: ['stat_row'] },
};

/** The complete packages of docs/descriptor.md, one per mode (the JSON blocks with an appId). */
function documentedPackages(): Array<Record<string, unknown>> {
  const page = readFileSync(join(__dirname, '..', '..', 'docs', 'descriptor.md'), 'utf8');
  const blocks = [...page.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]);
  return blocks
    .filter((block) => block.includes('"appId"') && !block.includes('<service host>'))
    .map((block) => JSON.parse(block) as Record<string, unknown>);
}

interface ListedError {
  field: string;
  schema_path: string;
  message: string;
  code: string;
}

describe('the package descriptor as one checked contract', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let url: string;
  let auth: { authorization: string };
  let appId: string;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url });
    ({ url } = await env.startApi());
    await env.startWorker(); // sends the sign-up mail
    const developer = await onboardDeveloper(url, smtp, 'descriptor-contract@example.com');
    const app = await registerApp(url, developer);
    appId = app.id;
    auth = { authorization: `Bearer ${await appToken(url, app)}` };
  });
  afterAll(async () => {
    await env.close();
    await smtp.close();
  });

  let slugCounter = 0;
  const body = (overrides: Record<string, unknown> = {}) => ({
    appId,
    name: 'Acme Bank',
    slug: `contract-${(slugCounter += 1)}`,
    description: 'Balances and transfers',
    riskTier: 'data_only',
    runtimeUrl: 'https://127.0.0.1:9/runtime',
    capabilities: [state],
    ...overrides,
  });
  const create = (overrides: Record<string, unknown> = {}) => request(url).post('/v1/providers/packages').set(auth).send(body(overrides));
  const fields = (errors: ListedError[]) => errors.map((e) => e.field);

  /** Every listed error names its field, the schema rule (or the capability-schema location) and a message. */
  const expectWellFormed = (errors: ListedError[]) => {
    for (const error of errors) {
      expect(error).toEqual({
        field: expect.any(String),
        schema_path: expect.stringMatching(/^\$/),
        message: expect.any(String),
        code: expect.stringMatching(/^(missing_field|invalid_format|invalid_schema)$/),
      });
    }
  };

  it('refuses a misspelled capability field, naming its path and the nearest known name', async () => {
    const res = await create({ capabilities: [{ ...state, responseschema: { type: 'object', properties: {} } }] }).expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const message = '`capabilities[0].responseschema` is not a known field; did you mean `responseSchema`?';
    expect(res.body).toMatchObject({
      type: problemType('invalid_format'),
      status: 400,
      detail: message,
      field: 'capabilities[0].responseschema',
      errors: [{ field: 'capabilities[0].responseschema', schema_path: '$.$defs.stateCapability.additionalProperties', message }],
    });
  });

  it('refuses unknown fields at any depth and fields of another mode, with where they belong', async () => {
    const res = await create({
      capabilities: [
        { ...state, surfaceGuidance: { ...state.surfaceGuidance, placment: ['home_widgets'] } },
        { type: 'action', name: 'pay', schema: { amount: { type: 'number' } }, refreshInterval: 60, preferredComponents: ['action_row'] },
        {
          type: 'webhook',
          name: 'hook',
          schema: { a: { type: 'string' } },
          events: [{ type: 'meeting.updated', shema: { type: 'object' }, schema: { type: 'object' } }],
        },
      ],
    }).expect(400);
    const messages = (res.body.errors as ListedError[]).map((e) => e.message);
    expect(messages).toEqual([
      '`capabilities[0].surfaceGuidance.placment` is not a known field; did you mean `placement`?',
      '`capabilities[1].refreshInterval` is not a field of action capabilities (only of state)',
      '`capabilities[1].preferredComponents` is not a known field; did you mean `surfaceGuidance.preferredComponents`?',
      '`capabilities[2].events[0].shema` is not a known field; did you mean `schema`?',
    ]);
    const top = await create({ capabilities: undefined, capabilites: [state] }).expect(400);
    expect(top.body.errors.map((e: ListedError) => e.message)).toEqual(
      expect.arrayContaining(['`capabilites` is not a known field; did you mean `capabilities`?', 'capabilities is required']),
    );
  });

  it('lists three independent errors at once on create, each with field and schema_path', async () => {
    const res = await create({
      slug: 'Not A Slug',
      capabilities: [
        { ...state, refreshInterval: 0 },
        { type: 'history', name: 'tx', schema: { type: 'object', properties: { amount: { description: 'no type' } } } },
      ],
    }).expect(400);
    const errors = res.body.errors as ListedError[];
    expectWellFormed(errors);
    expect(errors).toEqual([
      expect.objectContaining({ field: 'slug', schema_path: '$.$defs.package.properties.slug.pattern', code: 'invalid_format' }),
      expect.objectContaining({
        field: 'capabilities[0].refreshInterval',
        schema_path: '$.$defs.stateCapability.properties.refreshInterval.minimum',
        code: 'invalid_format',
      }),
      expect.objectContaining({ field: 'capabilities[1].schema', schema_path: '$.properties.amount', code: 'invalid_schema' }),
    ]);
    // The first error stays at the top, as before the list: type, field and detail.
    expect(res.body).toMatchObject({ type: problemType('invalid_format'), field: 'slug', detail: expect.stringContaining('2 more') });
    // Nothing was created.
    const list = await request(url).get('/v1/providers/packages').set(auth).expect(200);
    expect(list.body.packages).toEqual([]);
  });

  it('lists three independent errors at once on a new version', async () => {
    const pkg = (await create().expect(201)).body;
    const res = await request(url)
      .post(`/v1/providers/packages/${pkg.id}/versions`)
      .set(auth)
      .send({
        version: '01.2.0',
        capabilities: [
          { ...state, surfaceGuidance: { intent: 'ads' } },
          { type: 'realtime', schema: { pair: { type: 'string', required: 'yes' } }, heartbeatInterval: 7200 },
        ],
      })
      .expect(400);
    const errors = res.body.errors as ListedError[];
    expectWellFormed(errors);
    expect(fields(errors)).toEqual([
      'version',
      'capabilities[0].surfaceGuidance.intent',
      'capabilities[1].schema',
      'capabilities[1].heartbeatInterval',
    ]);
    expect(errors[2]).toMatchObject({ schema_path: '$.pair.required', code: 'invalid_schema' });
    expect(errors[1].message).toMatch(/"ads" is not one of: ambient_context/);
    const read = await request(url).get(`/v1/providers/packages/${pkg.id}`).set(auth).expect(200);
    expect(read.body.versions).toHaveLength(1);
  });

  it('lists every error of a draft sent to validate, and validates a good draft in place of the stored version', async () => {
    const pkg = (await create().expect(201)).body;
    const validate = `/v1/providers/packages/${pkg.id}/versions/${pkg.versions[0].id}/validate`;
    const refused = await request(url)
      .post(validate)
      .set(auth)
      .send({
        capabilities: [
          { ...state, name: 'a b' },
          { ...state, name: 'second', examples: 'none' },
          { type: 'state', name: 'third', schema: { type: 'object', properties: { x: { type: 'string', precision: 2 } } } },
        ],
      })
      .expect(400);
    const errors = refused.body.errors as ListedError[];
    expectWellFormed(errors);
    expect(errors).toEqual([
      expect.objectContaining({ field: 'capabilities[0].name', schema_path: '$.$defs.name.pattern' }),
      expect.objectContaining({ field: 'capabilities[1].examples', message: 'capabilities[1].examples must be an array' }),
      expect.objectContaining({ field: 'capabilities[2].schema', schema_path: '$.properties.x.precision', code: 'invalid_schema' }),
    ]);
    expect(refused.body.instance).toBe(validate);

    // A good draft is validated locally instead of the stored descriptors: its thin description costs documentation points.
    const stored = await request(url).post(validate).set(auth).expect(200);
    const draft = await request(url)
      .post(validate)
      .set(auth)
      .send({ capabilities: [{ type: 'state', schema: { account: { type: 'string', required: true } } }] })
      .expect(200);
    expect(draft.body).toMatchObject({ full: false });
    expect(draft.body.dimensions.documentation.score).toBeLessThan(stored.body.dimensions.documentation.score);
    // The stored version is unchanged.
    const read = await request(url).get(`/v1/providers/packages/${pkg.id}`).set(auth).expect(200);
    expect(read.body.versions[0].capabilities[0].name).toBe('balance');
    // A full run validates the stored version only.
    const full = await request(url)
      .post(`${validate}?full=true`)
      .set(auth)
      .send({ capabilities: [state] })
      .expect(400);
    expect(full.body).toMatchObject({ type: problemType('invalid_format'), field: 'full' });
  });

  it('serves the schema at a stable public URL, and every complete package of docs/descriptor.md validates against it', async () => {
    const res = await request(url).get(SCHEMA_PATH).expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/schema\+json/);
    expect(res.headers['cache-control']).toBe('public, max-age=3600');
    const schema = JSON.parse(res.text) as Record<string, unknown>;
    expect(schema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', $id: SCHEMA_PATH });

    const ajv = new Ajv2020({ allErrors: true, strict: false });
    const validate = ajv.compile(schema);
    const examples = documentedPackages();
    expect(examples.map((p) => (p.capabilities as Array<{ type: string }>)[0].type)).toEqual([
      'state',
      'action',
      'history',
      'realtime',
      'webhook',
    ]);
    for (const example of examples) {
      expect({ slug: example.slug, valid: validate(example), errors: validate.errors ?? null }).toEqual({
        slug: example.slug,
        valid: true,
        errors: null,
      });
    }
    // And the service agrees: the documented state package is created as written (with a reachable runtime).
    const [documentedState] = examples;
    const capabilities = (documentedState.capabilities as Array<Record<string, unknown>>).map((c) => ({
      ...c,
      runtimeUrl: 'https://127.0.0.1:9/runtime',
    }));
    await create({
      ...documentedState,
      appId,
      slug: 'documented-state',
      capabilities,
      $schema: `https://docs.example.com${SCHEMA_PATH}`,
    }).expect(201);
    // The schema refuses what the service refuses.
    expect(validate(body({ capabilities: [{ ...state, responseschema: {} }] }))).toBe(false);
  });

  it('accepts the short form and the full form, and the components spelling once', async () => {
    const short = await create({ capabilities: [{ type: 'state', schema: { account: { type: 'string', required: true } } }] }).expect(201);
    expect(short.body.versions[0].capabilities[0].schema).toEqual({
      type: 'object',
      properties: { account: { type: 'string' } },
      required: ['account'],
    });
    const full = await create({ capabilities: [state] }).expect(201);
    expect(full.body.versions[0].capabilities[0].schema).toEqual(state.schema);

    const spelled = await create({ capabilities: [{ ...state, surfaceGuidance: { components: ['sparkline'] } }] }).expect(201);
    expect(spelled.body.versions[0].capabilities[0].surfaceGuidance.preferredComponents).toEqual(['sparkline']);
    const both = await create({
      capabilities: [{ ...state, surfaceGuidance: { components: ['sparkline'], preferredComponents: ['stat_row'] } }],
    }).expect(400);
    expect(both.body).toMatchObject({ field: 'capabilities[0].surfaceGuidance', detail: expect.stringContaining('give the list once') });
  });

  it('bounds the list for a hostile body and never lists a field twice', async () => {
    const bad = Array.from({ length: 50 }, (_, i) => ({ type: 'state', name: `c${i}`, schema: { type: 'object' }, a: 1, b: 2, c: 3 }));
    const res = await create({ capabilities: bad }).expect(400);
    expect(res.body.errors).toHaveLength(100);
    const keys = (res.body.errors as ListedError[]).map((e) => `${e.field} ${e.message}`);
    expect(new Set(keys).size).toBe(keys.length);
    const tooMany = await create({ capabilities: Array.from({ length: 51 }, () => state) }).expect(400);
    expect(tooMany.body).toMatchObject({ field: 'capabilities', detail: expect.stringContaining('1 to 50') });
  });

  it("keeps another developer's version closed to drafts, and checks a draft before revealing anything about the version", async () => {
    const pkg = (await create().expect(201)).body;
    const validate = `/v1/providers/packages/${pkg.id}/versions/${pkg.versions[0].id}/validate`;
    const other = await registerApp(url, await onboardDeveloper(url, smtp, 'descriptor-contract-other@example.com'));
    const foreign = { authorization: `Bearer ${await appToken(url, other)}` };
    const refused = await request(url)
      .post(validate)
      .set(foreign)
      .send({ capabilities: [state] })
      .expect(403);
    expect(refused.body.type).toBe(problemType('insufficient_scope'));
    // A bad draft is refused for what it says alone, the same for every caller.
    const bad = await request(url)
      .post(validate)
      .set(foreign)
      .send({ capabilities: [{ ...state, typo: 1 }] })
      .expect(400);
    expect(bad.body.field).toBe('capabilities[0].typo');
    const readOnly = { authorization: `Bearer ${await appToken(url, other, 'packages:read')}` };
    await request(url)
      .post(validate)
      .set(readOnly)
      .send({ capabilities: [state] })
      .expect(403);
    await request(url)
      .post(validate)
      .send({ capabilities: [state] })
      .expect(401);
    // The schema itself needs no credentials.
    await request(url).get(SCHEMA_PATH).set({ authorization: 'Bearer not-a-token' }).expect(200);
  });

  it('documents the errors member and the schema route in the OpenAPI document', async () => {
    const document = (await request(url).get('/docs/openapi.json').expect(200)).body;
    expect(document.components.schemas.ProblemDetailsDto.properties.errors).toMatchObject({
      type: 'array',
      items: { $ref: '#/components/schemas/ProblemFieldErrorDto' },
    });
    expect(document.components.schemas.ProblemFieldErrorDto.required).toEqual(expect.arrayContaining(['field', 'message', 'code']));
    // schema_path names the descriptor rule (or the capability schema) at fault; optional, as inbound event data has none.
    expect(Object.keys(document.components.schemas.ProblemFieldErrorDto.properties)).toEqual(expect.arrayContaining(['schema_path']));
    const operation = document.paths[SCHEMA_PATH].get;
    expect(operation.security ?? []).toEqual([]);
    expect(Object.keys(operation.responses['200'].content)).toEqual(['application/schema+json']);
  });
});
