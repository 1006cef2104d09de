// @ts-check
const assert = require('node:assert/strict');
const { before, describe, it } = require('node:test');
const { fixtures, RuntimeTestKit } = require('@soul-service/runtime-sdk/testing');
const { createRuntime, descriptor } = require('../server');

/**
 * The runtime called in process as the service calls it: the test kit signs runtime tokens with a key of its
 * own, and the runtime is given that key instead of the service's key set.
 */
describe('agenda_today (state)', () => {
  /** @type {RuntimeTestKit} */
  let kit;
  /** @type {ReturnType<typeof createRuntime>} */
  let runtime;

  before(async () => {
    kit = await RuntimeTestKit.create();
    runtime = createRuntime({ serviceUrl: kit.serviceUrl, appId: kit.appId, keys: kit.jwks });
  });

  it('answers test traffic with the example of soul-package.json', async () => {
    const examples = fixtures(descriptor);
    assert.ok(examples.length > 0, 'soul-package.json documents an example');
    for (const example of examples) {
      const { status, body } = await kit.execute(runtime, example.capability, { params: example.request, livemode: false });
      assert.equal(status, 200);
      assert.deepEqual(body.data, example.response);
    }
  });

  it('answers a live call from the calendar, with the cache lifetime of the refresh interval', async () => {
    const { status, body } = await kit.execute(runtime, 'agenda_today', { params: { calendar: 'work' } });
    assert.equal(status, 200);
    assert.equal(body.status, 'ok');
    assert.deepEqual({ meetings: body.data?.meetings, busyHours: body.data?.busyHours }, { meetings: 4, busyHours: 3.5 });
    assert.equal(body.ttl, 300);
    assert.equal(body.metadata?.source, 'calendar');
  });

  it('refuses params outside the schema with 400 INVALID_PARAMS naming the field', async () => {
    const { status, body } = await kit.execute(runtime, 'agenda_today', { params: { calendar: 'holidays' } });
    assert.equal(status, 400);
    assert.equal(body.error?.code, 'INVALID_PARAMS');
    assert.equal(body.error?.field, 'params.calendar');
  });

  it('refuses a call without a token, with a forged, expired or other app’s token with 401', async () => {
    const params = { calendar: 'work' };
    // Each token is minted for its call's request id, so only the named fault can be the reason it is refused.
    const refused = [
      { params, token: null },
      { params, requestId: 'req_forged', token: await kit.forgedToken({ requestId: 'req_forged' }) },
      { params, requestId: 'req_other_app', token: await kit.token({ requestId: 'req_other_app', audience: 'app_someone_else' }) },
      { params, issuedAt: new Date(Date.now() - 3_600_000) },
    ];
    for (const call of refused) {
      const { status, body } = await kit.execute(runtime, 'agenda_today', call);
      assert.equal(status, 401);
      assert.match(String(body.error?.code), /^AUTH_(INVALID|EXPIRED)$/);
    }
  });
});
