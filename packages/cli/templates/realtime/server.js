// @ts-check
/**
 * The runtime of {{name}}: one `realtime` capability, `free_rooms`.
 *
 * While a surface shows the capability, the service holds `GET /capabilities/free_rooms/stream` open and passes
 * each `data` event on to the user. The SDK verifies the runtime token before the stream opens, sets the
 * server-sent events headers, sends a `heartbeat` every `heartbeatInterval` seconds and aborts `stream.signal`
 * when the service disconnects; this file says what to send.
 */
const { readFileSync } = require('node:fs');
const { createServer } = require('node:http');
const { join } = require('node:path');
const { clearInterval, setInterval } = require('node:timers');
const { defineRuntime, nodeListener } = require('@soul-service/runtime-sdk');

/** @typedef {import('@soul-service/runtime-sdk').PackageDescriptor} PackageDescriptor */
/** @typedef {import('@soul-service/runtime-sdk').RuntimeOptions<PackageDescriptor>} RuntimeOptions */
/** @typedef {{ available: number, total: number, updatedAt: string }} Rooms the capability's `responseSchema`: one event */

/** The package descriptor: what `soul validate` checks, `soul push` sends and the SDK serves. */
const descriptor = /** @type {PackageDescriptor} */ (JSON.parse(readFileSync(join(__dirname, 'soul-package.json'), 'utf8')));

/**
 * Test traffic (conformance runs, `livemode: false`) gets the example event of soul-package.json, never a real
 * office's rooms. Conformance checks that example against the responseSchema, so this event is valid.
 */
const TEST_ROOMS = /** @type {Rooms} */ (descriptor.capabilities[0].examples?.[0]?.data);

/** How often the stand-in below counts the rooms again. */
const COUNT_EVERY_MS = 5_000;

/**
 * Your data source. This stand-in counts the rooms of a made-up office every few seconds; replace it with your
 * feed (occupancy sensors, a message queue, polling your API) for the office of `userId` (the user the service
 * acts for, from the verified token). It calls `listener` with each count until the function it returns is called.
 *
 * @param {string} _userId
 * @param {(rooms: Rooms) => void} listener
 * @returns {() => void} stops the counting
 */
function watchRooms(_userId, listener) {
  const total = 12;
  let available = 6;
  const count = () => {
    available = Math.min(total, Math.max(0, available + Math.round(Math.random() * 2 - 1)));
    listener({ available, total, updatedAt: new Date().toISOString() });
  };
  count();
  const timer = setInterval(count, COUNT_EVERY_MS);
  return () => clearInterval(timer);
}

/** @type {import('@soul-service/runtime-sdk').RealtimeHandler} */
async function freeRooms(stream, call) {
  if (!call.livemode) {
    // One event; the heartbeats keep the stream open until the caller disconnects.
    stream.send(TEST_ROOMS);
    return;
  }
  const stop = watchRooms(call.userId, (rooms) => stream.send(rooms));
  // The service disconnected (nobody looks any more, or it reconnects with a fresh token): stop counting.
  stream.signal.addEventListener('abort', stop);
}

/**
 * The runtime, configured from the environment; tests pass the test kit's issuer, app id and keys instead.
 *
 * @param {Partial<RuntimeOptions>} [overrides]
 */
function createRuntime(overrides = {}) {
  return defineRuntime({
    descriptor,
    // The service's public base URL: the issuer of the runtime tokens and the home of its key set (JWKS).
    serviceUrl: process.env.SOUL_SERVICE_URL || 'http://localhost:3000',
    // Your app's id (app_…): the audience of the runtime tokens.
    appId: process.env.SOUL_APP_ID || 'app_local',
    handlers: { free_rooms: freeRooms },
    ...overrides,
  });
}

if (require.main === module) {
  const port = Number(process.env.PORT || 8787);
  createServer(nodeListener(createRuntime())).listen(port, () => {
    console.log(`{{name}} runtime listening on http://localhost:${port}`);
  });
}

module.exports = { createRuntime, descriptor };
