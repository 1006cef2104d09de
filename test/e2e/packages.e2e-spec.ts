import request from 'supertest';
import { TestEnvironment } from '../support/harness';
import { appToken, onboardDeveloper, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';

const problemType = (code: string) => `https://docs.example.com/developers/errors#${code}`;

const stateCapability = {
  type: 'state',
  name: 'balance',
  description: 'Current account balance for the dashboard widget',
  refreshInterval: 300,
  schema: { type: 'object', properties: { account: { type: 'string', description: 'Account id' } }, required: ['account'] },
  surfaceGuidance: { intent: 'ambient_context', placement: ['home_widgets'], preferredComponents: ['stat_row'] },
};

describe('packages and capability descriptors', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let url: string;
  let auth: { authorization: string };
  let appId: string;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url });
    ({ url } = await env.startApi());
    await env.startWorker();
    const developer = await onboardDeveloper(url, smtp, 'packages@example.com');
    const app = await registerApp(url, developer);
    appId = app.id;
    auth = { authorization: `Bearer ${await appToken(url, app)}` };
  });
  afterAll(async () => {
    await env.close();
    await smtp.close();
  });

  let slugCounter = 0;
  const create = (overrides: Record<string, unknown> = {}) =>
    request(url)
      .post('/v1/providers/packages')
      .set(auth)
      .send({
        appId,
        name: 'Acme Bank',
        slug: `acme-bank-${(slugCounter += 1)}`,
        description: 'Balances and transfers',
        riskTier: 'data_only',
        runtimeUrl: 'https://127.0.0.1:9/runtime',
        capabilities: [stateCapability],
        ...overrides,
      });

  it('creates a package with its first version 1.0.0 and latestVersionId pointing at it', async () => {
    const res = await create().expect(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^pkg_/),
      appId,
      riskTier: 'data_only',
      status: 'active',
      latestVersionId: res.body.versions[0].id,
    });
    expect(res.body.versions[0]).toMatchObject({ id: expect.stringMatching(/^ver_/), version: '1.0.0', state: 'draft' });
  });

  it('normalises the short form and the components spelling to the stored form', async () => {
    const res = await create({
      capabilities: [
        {
          type: 'history',
          name: 'transactions',
          description: 'Recent transactions, newest first',
          schema: { account: { type: 'string', required: true }, tags: { type: 'array', items: { type: 'string' } } },
          surfaceGuidance: { intent: 'deep_dive', placement: ['service_context'], components: ['ranked_list'] },
        },
      ],
    }).expect(201);
    expect(res.body.versions[0].capabilities[0]).toEqual({
      type: 'history',
      name: 'transactions',
      description: 'Recent transactions, newest first',
      schema: {
        type: 'object',
        properties: { account: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } },
        required: ['account'],
      },
      surfaceGuidance: { intent: 'deep_dive', placement: ['service_context'], preferredComponents: ['ranked_list'] },
    });
  });

  it.each([
    ['an unknown type', { ...stateCapability, type: 'batch' }, 'capabilities[0].type', /batch.*state, action, history, realtime, webhook/],
    [
      'an unknown intent',
      { ...stateCapability, surfaceGuidance: { ...stateCapability.surfaceGuidance, intent: 'ads' } },
      'capabilities[0].surfaceGuidance.intent',
      /ads/,
    ],
    [
      'an unknown placement',
      { ...stateCapability, surfaceGuidance: { ...stateCapability.surfaceGuidance, placement: ['lock_screen'] } },
      'capabilities[0].surfaceGuidance.placement[0]',
      /home_widgets/,
    ],
    [
      'an unknown component',
      { ...stateCapability, surfaceGuidance: { ...stateCapability.surfaceGuidance, preferredComponents: ['carousel'] } },
      'capabilities[0].surfaceGuidance.preferredComponents[0]',
      /stat_row/,
    ],
  ])('refuses %s with invalid_format naming the value and the allowed set', async (_name, capability, field, detail) => {
    const res = await create({ capabilities: [capability] }).expect(400);
    expect(res.body).toMatchObject({ type: problemType('invalid_format'), field, detail: expect.stringMatching(detail) });
  });

  it.each([
    ['refreshInterval for state', { ...stateCapability, refreshInterval: undefined }, 'capabilities[0].refreshInterval'],
    [
      'heartbeatInterval for realtime',
      { ...stateCapability, type: 'realtime', refreshInterval: undefined },
      'capabilities[0].heartbeatInterval',
    ],
    ['the name (case-sensitive: Name is not name)', { ...stateCapability, name: undefined, Name: 'balance' }, 'capabilities[0].name'],
    ['the schema', { ...stateCapability, schema: undefined }, 'capabilities[0].schema'],
  ])('refuses a descriptor missing %s with missing_field', async (_name, capability, field) => {
    const res = await create({ capabilities: [capability] }).expect(400);
    expect(res.body).toMatchObject({ type: problemType('missing_field'), title: 'Missing Required Field', field });
  });

  it.each([
    ['another draft', { ...stateCapability.schema, $schema: 'http://json-schema.org/draft-04/schema#' }, '$.$schema'],
    [
      'a circular $ref',
      {
        type: 'object',
        definitions: { n: { type: 'object', properties: { next: { $ref: '#/definitions/n' } } } },
        properties: { head: { $ref: '#/definitions/n' } },
      },
      '$.definitions.n.properties.next.$ref',
    ],
    [
      'if/then/else in draft-07 mode',
      { ...stateCapability.schema, if: { required: ['account'] }, then: { required: ['account'] } },
      '$.if',
    ],
    ['a property without type', { type: 'object', properties: { amount: { description: 'How much' } } }, '$.properties.amount'],
    ['an unknown keyword', { type: 'object', properties: { amount: { type: 'number', currency: 'EUR' } } }, '$.properties.amount.currency'],
  ])('refuses a schema with %s as invalid_schema with schema_path', async (_name, schema, schemaPath) => {
    const res = await create({ capabilities: [{ ...stateCapability, schema }] }).expect(400);
    expect(res.body).toMatchObject({
      type: problemType('invalid_schema'),
      title: 'Invalid Schema',
      field: 'capabilities[0].schema',
      schema_path: schemaPath,
    });
  });

  it('registers webhook event types with their schemas', async () => {
    const webhook = {
      type: 'webhook',
      name: 'meeting_updates',
      description: 'Meeting changes pushed by the provider',
      schema: { type: 'object', properties: {} },
      events: [
        {
          type: 'meeting.updated',
          description: 'A meeting moved',
          schema: { type: 'object', properties: { meeting_id: { type: 'string' } }, required: ['meeting_id'] },
        },
      ],
      surfaceGuidance: { intent: 'notification', placement: ['daily_brief'], preferredComponents: ['meeting_prep'] },
    };
    const res = await create({ capabilities: [webhook] }).expect(201);
    expect(res.body.versions[0].capabilities[0].events).toEqual([webhook.events[0]]);
    const bad = await create({
      capabilities: [{ ...webhook, events: [{ type: 'meeting.updated', schema: { type: 'object', properties: { id: {} } } }] }],
    }).expect(400);
    expect(bad.body).toMatchObject({
      type: problemType('invalid_schema'),
      field: 'capabilities[0].events[0].schema',
      schema_path: '$.properties.id',
    });
  });

  it('refuses a duplicate slug, a bad slug, an http runtime and a missing capability list', async () => {
    const first = await create().expect(201);
    expect((await create({ slug: first.body.slug }).expect(409)).body.field).toBe('slug');
    expect((await create({ slug: 'Not A Slug' }).expect(400)).body.field).toBe('slug');
    expect((await create({ runtimeUrl: 'http://runtime.example' }).expect(400)).body.field).toBe('runtimeUrl');
    expect((await create({ capabilities: [] }).expect(400)).body.field).toBe('capabilities');
    expect((await create({ riskTier: 'casual' }).expect(400)).body.field).toBe('riskTier');
  });

  it('adds versions only with a greater number', async () => {
    const pkg = (await create().expect(201)).body;
    const v2 = await request(url)
      .post(`/v1/providers/packages/${pkg.id}/versions`)
      .set(auth)
      .send({ version: '1.1.0', capabilities: [stateCapability] })
      .expect(201);
    expect(v2.body).toMatchObject({ version: '1.1.0', state: 'draft' });
    const again = await request(url)
      .post(`/v1/providers/packages/${pkg.id}/versions`)
      .set(auth)
      .send({ version: '1.0.9', capabilities: [stateCapability] })
      .expect(400);
    expect(again.body).toMatchObject({ field: 'version', detail: expect.stringContaining('1.1.0') });
    const read = await request(url).get(`/v1/providers/packages/${pkg.id}`).set(auth).expect(200);
    expect(read.body.latestVersionId).toBe(v2.body.id);
  });

  it("requires packages:write and refuses another developer's package", async () => {
    const developer = await onboardDeveloper(url, smtp, 'packages-other@example.com');
    const otherApp = await registerApp(url, developer);
    const readOnly = await appToken(url, otherApp, 'packages:read');
    const refused = await request(url).post('/v1/providers/packages').set('authorization', `Bearer ${readOnly}`).send({}).expect(403);
    expect(refused.body.detail).toContain('packages:write');
    const pkg = (await create().expect(201)).body;
    const foreign = await request(url).get(`/v1/providers/packages/${pkg.id}`).set('authorization', `Bearer ${readOnly}`).expect(403);
    expect(foreign.body.type).toBe(problemType('insufficient_scope'));
    const otherToken = await appToken(url, otherApp);
    const borrowed = await request(url)
      .post('/v1/providers/packages')
      .set('authorization', `Bearer ${otherToken}`)
      .send({
        appId,
        name: 'Not mine',
        slug: 'not-mine',
        description: 'x',
        riskTier: 'data_only',
        runtimeUrl: 'https://127.0.0.1:9',
        capabilities: [stateCapability],
      })
      .expect(403);
    expect(borrowed.body.type).toBe(problemType('insufficient_scope'));
  });
});
