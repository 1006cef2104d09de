// @ts-check
const assert = require('node:assert/strict');
const { Buffer } = require('node:buffer');
const { createHmac, randomBytes } = require('node:crypto');
const { before, describe, it } = require('node:test');
const { fixtures, RuntimeTestKit } = require('@soul-service/runtime-sdk/testing');
const { createRuntime, descriptor, installs } = require('../server');

/** A signing secret as the service issues them. */
const SECRET = `whsec_${randomBytes(24).toString('base64')}`;

/**
 * Deliveries signed as the service signs them (the test kit's `signedDelivery`), handed to the runtime in
 * process as the node:http adapter would hand them over: the exact bytes, untouched.
 */
describe('webhook receiver and meeting_updates (webhook)', () => {
  /** @type {RuntimeTestKit} */
  let kit;
  /** @type {ReturnType<typeof createRuntime>} */
  let runtime;

  /**
   * @param {{ headers: Record<string, string>, body: string }} delivery
   * @returns {Promise<{ status: number, body: any }>}
   */
  async function deliver({ headers, body }) {
    const lowerCased = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
    const reply = await runtime.handle({ method: 'POST', url: '/webhooks', headers: lowerCased, body: Buffer.from(body) });
    assert.equal(reply.kind, 'json');
    return reply.kind === 'json' ? { status: reply.status, body: reply.body } : { status: 0, body: null };
  }

  before(async () => {
    kit = await RuntimeTestKit.create();
    runtime = createRuntime({ serviceUrl: kit.serviceUrl, appId: kit.appId, keys: kit.jwks, webhookSecret: SECRET });
  });

  it('documents an example event of a registered type', () => {
    const [example] = fixtures(descriptor);
    assert.equal(example?.event, 'meeting.updated');
  });

  it('remembers a live install and forgets it when removed, once per delivery', async () => {
    const created = kit.signedDelivery(
      {
        type: 'install.created',
        data: { install_id: 'inst_1', user_id: 'usr_1', package_id: 'pkg_1', version: '1.0.0', scopes_granted: [] },
      },
      SECRET,
    );
    assert.deepEqual(await deliver(created), { status: 200, body: { received: true } });
    assert.equal(installs.get('inst_1'), 'usr_1');
    // The same delivery again (a retry): acknowledged, not handled twice.
    assert.deepEqual(await deliver(created), { status: 200, body: { received: true, duplicate: true } });

    const removed = kit.signedDelivery(
      { type: 'install.removed', data: { install_id: 'inst_1', user_id: 'usr_1', package_id: 'pkg_1', reason: 'user_uninstalled' } },
      SECRET,
    );
    assert.equal((await deliver(removed)).status, 200);
    assert.equal(installs.has('inst_1'), false);
  });

  it('acknowledges a test delivery without acting on it', async () => {
    const test = kit.signedDelivery(
      {
        type: 'install.created',
        data: { install_id: 'inst_test', user_id: 'usr_test', package_id: 'pkg_1', version: '1.0.0', scopes_granted: [] },
      },
      SECRET,
      { livemode: false },
    );
    assert.deepEqual(await deliver(test), { status: 200, body: { received: true, test: true } });
    assert.equal(installs.has('inst_test'), false);
  });

  it('refuses with 401 a delivery that is unsigned, signed with another secret, or altered', async () => {
    const event = {
      type: 'install.removed',
      data: { install_id: 'inst_2', user_id: 'usr_2', package_id: 'pkg_1', reason: 'user_uninstalled' },
    };
    const signed = kit.signedDelivery(event, SECRET);
    const unsigned = { headers: { 'content-type': 'application/json' }, body: signed.body };
    const otherSecret = kit.signedDelivery(event, `whsec_${randomBytes(24).toString('base64')}`);
    const altered = { headers: signed.headers, body: signed.body.replace('inst_2', 'inst_3') };
    for (const delivery of [unsigned, otherSecret, altered]) assert.equal((await deliver(delivery)).status, 401);
  });

  it('accepts a delivery signed with X-Service-Signature only, as conformance probes it', async () => {
    const body = JSON.stringify({
      id: 'evt_probe',
      type: 'ping',
      created_at: new Date().toISOString(),
      app_id: kit.appId,
      idempotency_key: 'evt_probe',
      data: {},
    });
    const signature = `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`;
    const headers = { 'content-type': 'application/json', 'x-service-signature': signature, 'x-service-livemode': 'false' };
    assert.equal((await deliver({ headers, body })).status, 200);
    assert.equal((await deliver({ headers: { ...headers, 'x-service-signature': signature.slice(7) }, body })).status, 401);
  });

  it('refuses a capability call without a valid runtime token with 401', async () => {
    const { status, body } = await kit.execute(runtime, 'meeting_updates', { token: null });
    assert.equal(status, 401);
    assert.equal(body.error?.code, 'AUTH_INVALID');
  });
});
