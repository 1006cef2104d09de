import request from 'supertest';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, onboardDeveloper, registerApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { TestIdentityProvider } from '../support/identity-provider';
import { login } from '../support/users';

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
  let idp: TestIdentityProvider;
  let url: string;
  let auth: { authorization: string };
  let appId: string;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
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
    await idp.close();
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
      runtimeUrl: 'https://127.0.0.1:9/runtime',
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
    ['the type', { ...stateCapability, type: undefined }, 'capabilities[0].type'],
    ['the schema', { ...stateCapability, schema: undefined }, 'capabilities[0].schema'],
  ])('refuses a descriptor missing %s (the two required fields) with missing_field', async (_name, capability, field) => {
    const res = await create({ capabilities: [capability] }).expect(400);
    expect(res.body).toMatchObject({ type: problemType('missing_field'), title: 'Missing Required Field', field });
  });

  it.each([
    ['another draft', { ...stateCapability.schema, $schema: 'http://json-schema.org/draft-04/schema#' }, '$.$schema'],
    [
      'a circular $ref',
      {
        type: 'object',
        definitions: { n: { type: 'object', properties: { next: { type: 'object', $ref: '#/definitions/n' } } } },
        properties: { head: { type: 'object', $ref: '#/definitions/n' } },
      },
      '$.definitions.n.properties.next.$ref',
    ],
    [
      'if/then/else in draft-07 mode',
      { ...stateCapability.schema, if: { required: ['account'] }, then: { required: ['account'] } },
      '$.if',
    ],
    ['a property without type', { type: 'object', properties: { amount: { description: 'How much' } } }, '$.properties.amount'],
    ['a property with enum but no type', { type: 'object', properties: { kind: { enum: ['a', 'b'] } } }, '$.properties.kind'],
    ['a property with const but no type', { type: 'object', properties: { kind: { const: 'a' } } }, '$.properties.kind'],
    [
      'a property with $ref but no type',
      { type: 'object', definitions: { n: { type: 'number' } }, properties: { amount: { $ref: '#/definitions/n' } } },
      '$.properties.amount',
    ],
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

  it("accepts the spec's package input, which has no runtimeUrl: the version has no runtime until one is declared", async () => {
    const res = await create({ runtimeUrl: undefined }).expect(201);
    expect(res.body).toMatchObject({ runtimeUrl: null, versions: [{ runtimeUrl: null }] });
    expect(res.body.versions[0].capabilities[0]).not.toHaveProperty('runtimeUrl');
    const local = await request(url)
      .post(`/v1/providers/packages/${res.body.id}/versions/${res.body.versions[0].id}/validate`)
      .set(auth)
      .expect(200);
    expect(local.body).toMatchObject({ full: false, passed: true });
  });

  it('takes runtimeUrl where the spec puts it, on the capability, and stamps the version’s runtime on every capability it calls', async () => {
    const res = await create({
      runtimeUrl: undefined,
      capabilities: [
        { ...stateCapability, runtimeUrl: 'https://127.0.0.1:9/rt/' },
        { ...stateCapability, name: 'savings' },
      ],
    }).expect(201);
    expect(res.body.runtimeUrl).toBe('https://127.0.0.1:9/rt');
    expect(res.body.versions[0].runtimeUrl).toBe('https://127.0.0.1:9/rt');
    expect(res.body.versions[0].capabilities.map((c: { runtimeUrl: string }) => c.runtimeUrl)).toEqual([
      'https://127.0.0.1:9/rt',
      'https://127.0.0.1:9/rt',
    ]);
    const versions = `/v1/providers/packages/${res.body.id}/versions`;
    const kept = await request(url)
      .post(versions)
      .set(auth)
      .send({ version: '1.1.0', capabilities: [stateCapability] })
      .expect(201);
    expect(kept.body).toMatchObject({ runtimeUrl: 'https://127.0.0.1:9/rt', capabilities: [{ runtimeUrl: 'https://127.0.0.1:9/rt' }] });
    const moved = await request(url)
      .post(versions)
      .set(auth)
      .send({ version: '1.2.0', capabilities: [{ ...stateCapability, runtimeUrl: 'https://127.0.0.1:10/v2' }] })
      .expect(201);
    expect(moved.body).toMatchObject({ runtimeUrl: 'https://127.0.0.1:10/v2', capabilities: [{ runtimeUrl: 'https://127.0.0.1:10/v2' }] });
  });

  it('refuses two runtimes in one version and a capability runtimeUrl that is not HTTPS, naming the capability field', async () => {
    const two = await create({
      runtimeUrl: undefined,
      capabilities: [
        { ...stateCapability, runtimeUrl: 'https://127.0.0.1:9/a' },
        { ...stateCapability, name: 'other', runtimeUrl: 'https://127.0.0.1:9/b' },
      ],
    }).expect(400);
    expect(two.body).toMatchObject({
      type: problemType('invalid_format'),
      field: 'capabilities[1].runtimeUrl',
      detail: expect.stringContaining('share one runtime'),
    });
    const plain = await create({
      runtimeUrl: undefined,
      capabilities: [{ ...stateCapability, runtimeUrl: 'http://runtime.example' }],
    }).expect(400);
    expect(plain.body).toMatchObject({ field: 'capabilities[0].runtimeUrl', detail: expect.stringContaining('https') });
    const notText = await create({ capabilities: [{ ...stateCapability, runtimeUrl: 42 }] }).expect(400);
    expect(notText.body.field).toBe('capabilities[0].runtimeUrl');
  });

  it('accepts the short form with only type and schema, and gives every optional field its documented default', async () => {
    const res = await create({
      riskTier: 'action_capable',
      capabilities: [
        { type: 'state', schema: { balance: { type: 'number', required: true } } },
        { type: 'state', schema: { account: { type: 'string' } } },
        { type: 'realtime', schema: { pair: { type: 'string' } } },
        { type: 'action', schema: { amount: { type: 'number', required: false } }, surfaceGuidance: { intent: 'notification' } },
        { type: 'webhook', name: 'meeting.updated', description: 'A meeting moved', schema: { meetingId: { type: 'string' } } },
      ],
    }).expect(201);
    const [first, second, realtime, action, webhook] = res.body.versions[0].capabilities;
    expect(first).toEqual({
      type: 'state',
      name: 'state',
      description: '',
      schema: { type: 'object', properties: { balance: { type: 'number' } }, required: ['balance'] },
      runtimeUrl: 'https://127.0.0.1:9/runtime',
      refreshInterval: 300,
      surfaceGuidance: {
        intent: 'ambient_context',
        placement: ['home_widgets'],
        preferredComponents: ['stat_row', 'sparkline', 'progress_bar'],
      },
    });
    expect(second.name).toBe('state_2');
    expect(realtime).toMatchObject({
      name: 'realtime',
      heartbeatInterval: 30,
      surfaceGuidance: { intent: 'ambient_context', placement: ['home_widgets'], preferredComponents: ['sparkline', 'stat_row'] },
    });
    expect(action).toMatchObject({
      name: 'action',
      schema: { type: 'object', properties: { amount: { type: 'number' } } },
      surfaceGuidance: { intent: 'notification', placement: ['service_context'], preferredComponents: ['action_row', 'cta_banner'] },
    });
    expect(action.schema).not.toHaveProperty('required');
    expect(webhook).toMatchObject({
      name: 'meeting.updated',
      events: [{ type: 'meeting.updated', description: 'A meeting moved', schema: webhook.schema }],
      surfaceGuidance: { intent: 'notification', placement: ['daily_brief'], preferredComponents: ['meeting_prep', 'action_row'] },
    });
    expect(webhook).not.toHaveProperty('runtimeUrl');
  });

  it('takes empty placement and component lists as given, and a name given to one capability before defaulting the others', async () => {
    const res = await create({
      capabilities: [
        { type: 'state', schema: { a: { type: 'string' } } },
        { type: 'state', name: 'state', schema: { b: { type: 'string' } }, surfaceGuidance: { placement: [], components: [] } },
      ],
    }).expect(201);
    const [unnamed, named] = res.body.versions[0].capabilities;
    expect(unnamed.name).toBe('state_2');
    expect(named).toMatchObject({ name: 'state', surfaceGuidance: { intent: 'ambient_context', placement: [], preferredComponents: [] } });
  });

  it.each(['getBalance', 'get-balance', 'v2.balance', 'Balance_2~beta', 'a'])('accepts the capability name %s', async (name) => {
    const res = await create({ capabilities: [{ ...stateCapability, name }] }).expect(201);
    expect(res.body.versions[0].capabilities[0].name).toBe(name);
  });

  it.each([['..'], ['.'], ['a/b'], ['a b'], ['x'.repeat(129)], ['saldo€'], ['a?b'], ['']])(
    'refuses the capability name %j, saying that the runtime path needs the rule',
    async (name) => {
      const res = await create({ capabilities: [{ ...stateCapability, name }] }).expect(400);
      expect(res.body).toMatchObject({
        type: problemType('invalid_format'),
        field: 'capabilities[0].name',
        detail: expect.stringContaining('one segment of the runtime path <runtimeUrl>/capabilities/<name>/execute'),
      });
    },
  );

  it.each([
    ['name', 'capabilities[0].name'],
    ['description', 'capabilities[0].description'],
    ['runtimeUrl', 'capabilities[0].runtimeUrl'],
    ['refreshInterval', 'capabilities[0].refreshInterval'],
    ['surfaceGuidance', 'capabilities[0].surfaceGuidance'],
    ['examples', 'capabilities[0].examples'],
  ])('refuses null for the optional field %s instead of taking its default', async (key, field) => {
    const res = await create({ capabilities: [{ ...stateCapability, [key]: null }] }).expect(400);
    expect(res.body).toMatchObject({ type: problemType('invalid_format'), field });
  });

  it('refuses two capabilities with one name, a short-form required that is not a boolean and an event type with spaces', async () => {
    const twice = await create({ capabilities: [stateCapability, stateCapability] }).expect(400);
    expect(twice.body).toMatchObject({ field: 'capabilities[1].name', detail: expect.stringContaining('two capabilities') });
    const required = await create({ capabilities: [{ type: 'state', schema: { a: { type: 'string', required: 'yes' } } }] }).expect(400);
    expect(required.body).toMatchObject({
      type: problemType('invalid_schema'),
      field: 'capabilities[0].schema',
      schema_path: '$.a.required',
    });
    const spaced = await create({
      capabilities: [
        { type: 'webhook', schema: { a: { type: 'string' } }, events: [{ type: 'meeting updated', schema: { type: 'object' } }] },
      ],
    }).expect(400);
    expect(spaced.body).toMatchObject({ type: problemType('invalid_format'), field: 'capabilities[0].events[0].type' });
  });

  it('documents every descriptor field per mode in the OpenAPI document, full and short form, input and stored', async () => {
    const document = (await request(url).get('/docs/openapi.json').expect(200)).body;
    const schemas = document.components.schemas;
    const ref = (name: string) => `#/components/schemas/${name}`;
    const modes = ['State', 'Action', 'History', 'Realtime', 'Webhook'];
    expect(schemas.CreatePackageDto.properties.capabilities.items).toEqual({
      oneOf: modes.map((m) => ({ $ref: ref(`${m}CapabilityInputDto`) })),
      discriminator: {
        propertyName: 'type',
        mapping: Object.fromEntries(modes.map((m) => [m.toLowerCase(), ref(`${m}CapabilityInputDto`)])),
      },
    });
    expect(schemas.CreateVersionDto.properties.capabilities.items).toEqual(schemas.CreatePackageDto.properties.capabilities.items);
    expect(schemas.VersionDto.properties.capabilities.items.oneOf).toEqual(modes.map((m) => ({ $ref: ref(`${m}CapabilityDto`) })));
    expect(schemas.CreatePackageDto.required).not.toContain('runtimeUrl');
    for (const mode of modes) {
      expect(schemas[`${mode}CapabilityInputDto`].required.sort()).toEqual(['schema', 'type']);
      expect(Object.keys(schemas[`${mode}CapabilityInputDto`].properties)).toEqual(
        expect.arrayContaining(['type', 'name', 'description', 'schema', 'runtimeUrl', 'surfaceGuidance', 'responseSchema', 'examples']),
      );
    }
    expect(schemas.StateCapabilityInputDto.properties.refreshInterval).toMatchObject({ type: 'integer', default: 300 });
    expect(schemas.RealtimeCapabilityInputDto.properties.heartbeatInterval).toMatchObject({ type: 'integer', default: 30 });
    expect(schemas.WebhookCapabilityInputDto.properties.events.items).toEqual({ $ref: ref('WebhookEventTypeInputDto') });
    expect(Object.keys(schemas.WebhookEventTypeInputDto.properties)).toEqual(['type', 'description', 'schema']);
    expect(schemas.WebhookCapabilityDto.required).toEqual(expect.arrayContaining(['events', 'surfaceGuidance', 'name', 'description']));
    // The short form: a map of field name to { type, required, items }.
    expect(schemas.StateCapabilityInputDto.properties.schema.oneOf).toEqual([
      { $ref: ref('JsonSchemaObjectDto') },
      expect.objectContaining({ additionalProperties: { $ref: ref('ShortFormFieldDto') } }),
    ]);
    expect(Object.keys(schemas.ShortFormFieldDto.properties)).toEqual(expect.arrayContaining(['type', 'required', 'items']));
  });

  it('lists a data_only version automatically at submission, out of the review queue; publish puts it in the catalog, and the bridge calls the runtime its capabilities name', async () => {
    const runtime = await ProviderRuntime.start();
    try {
      const readOnly = (goodPackageCapabilities() as Array<{ type: string }>).filter((c) => c.type !== 'action');
      const pkg = (
        await create({ runtimeUrl: undefined, capabilities: readOnly.map((c) => ({ ...c, runtimeUrl: runtime.url })) }).expect(201)
      ).body;
      const versionId = pkg.versions[0].id;
      const submitted = await request(url)
        .post(`/v1/providers/packages/manage/${pkg.id}/versions/${versionId}/submit`)
        .set(auth)
        .expect(200);
      expect(submitted.body).toMatchObject({ review: 'automatic', version: { state: 'approved' }, conformance: { passed: true } });
      // Submission found the runtime where the capabilities name it.
      expect(runtime.requestsTo('/capabilities/balance/execute').length).toBeGreaterThan(0);
      const queue = await request(url)
        .get('/v1/operator/reviews')
        .set({ authorization: `Bearer ${OPERATOR_TOKEN}` })
        .expect(200);
      expect(queue.body.reviews.map((r: { id: string }) => r.id)).not.toContain(versionId);
      const published = await request(url)
        .post(`/v1/providers/packages/manage/${pkg.id}/versions/${versionId}/publish`)
        .set(auth)
        .expect(200);
      expect(published.body).toMatchObject({ publishedVersionId: versionId, runtimeUrl: runtime.url, version: { state: 'published' } });
      const user = await login(url, idp, { sub: 'uid-packages', name: 'Package User', email: 'package-user@example.com' });
      await request(url).post('/v1/installs').set(user.auth).send({ package_id: pkg.id }).expect(201);
      runtime.clearRequests();
      const executed = await request(url)
        .post(`/v1/providers/packages/${pkg.id}/capabilities/balance/execute`)
        .set(user.auth)
        .send({ params: { account: 'checking' } })
        .expect(200);
      expect(executed.body).toMatchObject({ status: 'ok', data: { available: 1520.75, currency: 'EUR' } });
      expect(runtime.requestsTo('/capabilities/balance/execute')).toHaveLength(1);
    } finally {
      await runtime.close();
    }
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
