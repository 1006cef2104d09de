// @ts-check
const assert = require('node:assert/strict');
const { createServer, get } = require('node:http');
const { after, before, describe, it } = require('node:test');
const { nodeListener } = require('@soul-service/runtime-sdk');
const { fixtures, RuntimeTestKit } = require('@soul-service/runtime-sdk/testing');
const { createRuntime, descriptor } = require('../server');

/** @typedef {{ status: number | undefined, contentType: string | undefined, events: Array<{ event: string, data: any }> }} StreamRead */

/**
 * Opens a stream as the service does and reads server-sent events until the first `data` event (or, for a
 * refused call, the JSON error), then disconnects as the service does when nobody looks any more.
 *
 * @param {string} url
 * @param {Record<string, string>} headers
 * @returns {Promise<StreamRead>}
 */
function readStream(url, headers) {
  return new Promise((resolve, reject) => {
    const request = get(url, { headers }, (response) => {
      /** @type {StreamRead} */
      const read = { status: response.statusCode, contentType: response.headers['content-type'], events: [] };
      let text = '';
      response.setEncoding('utf8');
      if (response.statusCode !== 200) {
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ ...read, events: [{ event: 'error', data: JSON.parse(text) }] }));
        return;
      }
      response.on('data', (chunk) => {
        text += chunk;
        for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
          const lines = text.slice(0, end).split('\n');
          text = text.slice(end + 2);
          const event = lines.find((line) => line.startsWith('event: '))?.slice(7) ?? 'message';
          const data = lines.find((line) => line.startsWith('data: '))?.slice(6);
          read.events.push({ event, data: data === undefined ? undefined : JSON.parse(data) });
        }
        if (read.events.some((e) => e.event === 'data')) {
          request.destroy();
          resolve(read);
        }
      });
    });
    request.on('error', reject);
  });
}

/**
 * The runtime served on a loopback port and called over HTTP as the service calls it: the test kit signs
 * runtime tokens with a key of its own, and the runtime is given that key instead of the service's key set.
 */
describe('free_rooms (realtime)', () => {
  /** @type {RuntimeTestKit} */
  let kit;
  /** @type {import('node:http').Server} */
  let server;
  let url = '';

  before(async () => {
    kit = await RuntimeTestKit.create();
    const runtime = createRuntime({ serviceUrl: kit.serviceUrl, appId: kit.appId, keys: kit.jwks });
    server = createServer(nodeListener(runtime));
    await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
    const address = /** @type {import('node:net').AddressInfo} */ (server.address());
    url = `http://127.0.0.1:${address.port}/capabilities/free_rooms/stream`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  it('streams the example of soul-package.json to test traffic, after a heartbeat', async () => {
    const [example] = fixtures(descriptor);
    assert.ok(example, 'soul-package.json documents an example');
    const read = await readStream(url, await kit.headers('realtime', { livemode: false }));
    assert.equal(read.status, 200);
    assert.match(String(read.contentType), /^text\/event-stream/);
    assert.equal(read.events[0].event, 'heartbeat');
    assert.ok(!Number.isNaN(Date.parse(read.events[0].data.ts)));
    assert.deepEqual(read.events.find((e) => e.event === 'data')?.data, example.response);
  });

  it('streams live counts of the rooms', async () => {
    const read = await readStream(url, await kit.headers('realtime'));
    assert.equal(read.status, 200);
    const rooms = read.events.find((e) => e.event === 'data')?.data;
    assert.equal(rooms.total, 12);
    assert.ok(Number.isInteger(rooms.available) && rooms.available >= 0 && rooms.available <= rooms.total);
    assert.ok(Date.now() - Date.parse(rooms.updatedAt) < 60_000);
  });

  it('refuses to open the stream without a token, or with a forged, expired or other app’s token, with 401', async () => {
    // Each token is minted for its call's request id, so only the named fault can be the reason it is refused.
    const refused = [
      { token: null },
      { requestId: 'req_forged', token: await kit.forgedToken({ requestId: 'req_forged' }) },
      { requestId: 'req_other_app', token: await kit.token({ requestId: 'req_other_app', audience: 'app_someone_else' }) },
      { issuedAt: new Date(Date.now() - 3_600_000) },
    ];
    for (const call of refused) {
      const read = await readStream(url, await kit.headers('realtime', call));
      assert.equal(read.status, 401);
      assert.match(String(read.events[0].data.error.code), /^AUTH_(INVALID|EXPIRED)$/);
    }
  });
});
