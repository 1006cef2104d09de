// @ts-check
const assert = require('node:assert/strict');
const { before, describe, it } = require('node:test');
const { fixtures, RuntimeTestKit } = require('@soul-service/runtime-sdk/testing');
const { createRuntime, descriptor } = require('../server');

/**
 * The runtime called in process as the service calls it: the test kit signs runtime tokens with a key of its
 * own, and the runtime is given that key instead of the service's key set.
 */
describe('book_meeting (action)', () => {
  /** @type {RuntimeTestKit} */
  let kit;
  /** @type {ReturnType<typeof createRuntime>} */
  let runtime;
  const input = { title: 'Design review', startsAt: '2030-06-03T09:00:00Z', durationMinutes: 45 };

  before(async () => {
    kit = await RuntimeTestKit.create();
    runtime = createRuntime({ serviceUrl: kit.serviceUrl, appId: kit.appId, keys: kit.jwks });
  });

  it('answers test traffic with the example of soul-package.json, and books nothing', async () => {
    const examples = fixtures(descriptor);
    assert.ok(examples.length > 0, 'soul-package.json documents an example');
    for (const example of examples) {
      const { status, body } = await kit.execute(runtime, example.capability, { input: example.request, livemode: false });
      assert.equal(status, 200);
      assert.deepEqual(body.result, example.response);
      assert.match(String(body.message), /^Test booking/);
      // Had the test call booked, this live booking at the same time would clash with it.
      const live = await kit.execute(runtime, example.capability, { input: example.request, userId: 'usr_testkit0000000000000000' });
      assert.equal(live.status, 200);
    }
  });

  it('books a live meeting once per idempotency key', async () => {
    const call = { input, userId: 'usr_once', idempotencyKey: 'idem_once' };
    const first = await kit.execute(runtime, 'book_meeting', call);
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.result, { meetingId: 'mtg_1', startsAt: '2030-06-03T09:00:00Z', endsAt: '2030-06-03T09:45:00Z' });
    assert.equal(first.body.message, 'Booked "Design review" on your calendar.');
    // The service retries with the same key: the same answer, and no second meeting.
    const retry = await kit.execute(runtime, 'book_meeting', call);
    assert.deepEqual(retry.body, first.body);
    // Another key for the same time is a new booking, which the calendar refuses.
    const clash = await kit.execute(runtime, 'book_meeting', { ...call, idempotencyKey: 'idem_twice' });
    assert.equal(clash.status, 409);
    assert.equal(clash.body.error?.code, 'CONFLICT');
    assert.match(String(clash.body.error?.message), /already has "Design review"/);
  });

  it('refuses the same idempotency key with other input with 409 CONFLICT', async () => {
    const first = await kit.execute(runtime, 'book_meeting', { input, userId: 'usr_keys', idempotencyKey: 'idem_reused' });
    assert.equal(first.status, 200);
    const other = { ...input, title: 'Another meeting' };
    const reused = await kit.execute(runtime, 'book_meeting', { input: other, userId: 'usr_keys', idempotencyKey: 'idem_reused' });
    assert.equal(reused.status, 409);
    assert.equal(reused.body.error?.code, 'CONFLICT');
  });

  it('refuses input outside the schema with 400 INVALID_PARAMS naming the field', async () => {
    const { status, body } = await kit.execute(runtime, 'book_meeting', { input: { ...input, durationMinutes: 5 } });
    assert.equal(status, 400);
    assert.equal(body.error?.code, 'INVALID_PARAMS');
    assert.equal(body.error?.field, 'input.durationMinutes');
  });

  it('refuses a call without a token, with a forged, expired or other app’s token with 401', async () => {
    // Each token is minted for its call's request id, so only the named fault can be the reason it is refused.
    const refused = [
      { input, token: null },
      { input, requestId: 'req_forged', token: await kit.forgedToken({ requestId: 'req_forged' }) },
      { input, requestId: 'req_other_app', token: await kit.token({ requestId: 'req_other_app', audience: 'app_someone_else' }) },
      { input, issuedAt: new Date(Date.now() - 3_600_000) },
    ];
    for (const call of refused) {
      const { status, body } = await kit.execute(runtime, 'book_meeting', call);
      assert.equal(status, 401);
      assert.match(String(body.error?.code), /^AUTH_(INVALID|EXPIRED)$/);
    }
  });
});
