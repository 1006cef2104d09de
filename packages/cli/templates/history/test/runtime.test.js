// @ts-check
const assert = require('node:assert/strict');
const { before, describe, it } = require('node:test');
const { fixtures, RuntimeTestKit } = require('@soul-service/runtime-sdk/testing');
const { createRuntime, descriptor } = require('../server');

/**
 * The runtime called in process as the service calls it: the test kit signs runtime tokens with a key of its
 * own, and the runtime is given that key instead of the service's key set.
 */
describe('past_meetings (history)', () => {
  /** @type {RuntimeTestKit} */
  let kit;
  /** @type {ReturnType<typeof createRuntime>} */
  let runtime;

  before(async () => {
    kit = await RuntimeTestKit.create();
    runtime = createRuntime({ serviceUrl: kit.serviceUrl, appId: kit.appId, keys: kit.jwks });
  });

  it('answers test traffic with the example of soul-package.json first', async () => {
    const examples = fixtures(descriptor);
    assert.ok(examples.length > 0, 'soul-package.json documents an example');
    for (const example of examples) {
      const { status, body } = await kit.execute(runtime, example.capability, { params: example.request, livemode: false });
      assert.equal(status, 200);
      assert.deepEqual(body.items?.[0], example.response);
    }
  });

  it('pages through the whole list with the cursor it answers, newest first', async () => {
    /** @type {string[]} */
    const seen = [];
    /** @type {string | null | undefined} */
    let cursor;
    do {
      const params = { calendar: 'work', limit: 10, direction: 'backward', ...(cursor ? { cursor } : {}) };
      const { status, body } = await kit.execute(runtime, 'past_meetings', { params, livemode: false });
      assert.equal(status, 200);
      assert.equal(body.totalCount, 30);
      seen.push(...(body.items ?? []).map((item) => String(item.id)));
      cursor = body.cursor?.next;
      assert.equal(body.cursor?.hasMore, cursor !== null);
    } while (cursor);
    assert.equal(seen.length, 30);
    assert.equal(new Set(seen).size, 30);
    assert.equal(seen[0], 'mtg_test_30');
  });

  it('answers a live call from the calendar, newest first', async () => {
    const { status, body } = await kit.execute(runtime, 'past_meetings', { params: { calendar: 'personal', limit: 5 } });
    assert.equal(status, 200);
    const items = body.items ?? [];
    assert.equal(items.length, 5);
    assert.ok(items.every((item) => item.title === 'Book club'));
    const starts = items.map((item) => Date.parse(String(item.startsAt)));
    assert.deepEqual(
      starts,
      [...starts].sort((a, b) => b - a),
    );
    assert.ok(starts[0] < Date.now());
  });

  it('refuses params outside the schema, and a cursor it never issued, with 400 INVALID_PARAMS', async () => {
    const cases = [
      { params: { calendar: 'holidays' }, field: 'params.calendar' },
      { params: { calendar: 'work', limit: 'ten' }, field: 'params.limit' },
      { params: { calendar: 'work', cursor: 'not-a-cursor' }, field: 'params.cursor' },
    ];
    for (const { params, field } of cases) {
      const { status, body } = await kit.execute(runtime, 'past_meetings', { params });
      assert.equal(status, 400);
      assert.equal(body.error?.code, 'INVALID_PARAMS');
      assert.equal(body.error?.field, field);
    }
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
      const { status, body } = await kit.execute(runtime, 'past_meetings', call);
      assert.equal(status, 401);
      assert.match(String(body.error?.code), /^AUTH_(INVALID|EXPIRED)$/);
    }
  });
});
