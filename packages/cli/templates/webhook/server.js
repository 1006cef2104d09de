// @ts-check
/**
 * The runtime of {{name}}: one `webhook` capability, `meeting_updates`, and the app's webhook receiver.
 *
 * The service never calls a webhook capability: your runtime pushes its events (`meeting.updated`) to the
 * service. What the service sends this runtime are its own webhook deliveries (`install.created`,
 * `install.removed` …) at `POST /webhooks`, once you register `https://<this host>/webhooks` as the app's
 * webhook URL. The SDK verifies each delivery's signature (`X-Service-Signature`, and the Standard Webhooks
 * headers) over the raw bytes before the handler sees it, and answers 401 to a forged or stale one. It also
 * serves `/capabilities/…` with token verification, as conformance probes every runtime.
 */
const { readFileSync } = require('node:fs');
const { createServer } = require('node:http');
const { join } = require('node:path');
const { defineRuntime, nodeListener } = require('@soul-service/runtime-sdk');

/** @typedef {import('@soul-service/runtime-sdk').PackageDescriptor} PackageDescriptor */
/** @typedef {import('@soul-service/runtime-sdk').RuntimeOptions<PackageDescriptor>} RuntimeOptions */

/** The package descriptor: what `soul validate` checks, `soul push` sends and the SDK serves. */
const descriptor = /** @type {PackageDescriptor} */ (JSON.parse(readFileSync(join(__dirname, 'soul-package.json'), 'utf8')));

/**
 * The installs of this package, by install id, with their user: the users to push `meeting.updated` events for.
 * This stand-in keeps them in memory; keep them in your database.
 * @type {Map<string, string>}
 */
const installs = new Map();

/**
 * The idempotency keys of the deliveries already handled. The service delivers at least once, so a delivery can
 * arrive again; keep the keys in your database for as long as retries can come (a day).
 * @type {Set<string>}
 */
const handled = new Set();

/**
 * Handles one verified delivery; what it returns is the 200 answer's body.
 *
 * @param {import('@soul-service/runtime-sdk').DeliveredEvent} event
 * @param {import('@soul-service/runtime-sdk').DeliveryContext} context
 */
async function receiveDelivery(event, { livemode }) {
  // Test deliveries (the console's test events, conformance's probes): acknowledge them, never act on them.
  if (!livemode) return { received: true, test: true };
  if (handled.has(event.idempotency_key)) return { received: true, duplicate: true };
  switch (event.type) {
    case 'install.created':
      installs.set(event.data.install_id, event.data.user_id);
      break;
    case 'install.removed':
      installs.delete(event.data.install_id);
      break;
    default:
      // Other events (package.published, capability.failed …) need nothing here; subscribe to fewer in the console.
      break;
  }
  // Only once handled: a handler that throws answers 500, and the service delivers the event again.
  handled.add(event.idempotency_key);
  return { received: true };
}

/**
 * The runtime, configured from the environment; tests pass the test kit's issuer, app id, keys and secret instead.
 *
 * @param {Partial<RuntimeOptions> & { webhookSecret?: string }} [options]
 */
function createRuntime({ webhookSecret = process.env.SOUL_WEBHOOK_SECRET || '', ...overrides } = {}) {
  return defineRuntime({
    descriptor,
    // The service's public base URL: the issuer of the runtime tokens and the home of its key set (JWKS).
    serviceUrl: process.env.SOUL_SERVICE_URL || 'http://localhost:3000',
    // Your app's id (app_…): the audience of the runtime tokens.
    appId: process.env.SOUL_APP_ID || 'app_local',
    // A webhook capability has no handler: the service never calls it.
    handlers: {},
    // The app's webhook signing secret (whsec_…), shown when the webhook profile is created or rotated. During a
    // rotation, pass both: `secret: [current, previous]`.
    webhooks: { secret: webhookSecret, path: '/webhooks', handler: receiveDelivery },
    ...overrides,
  });
}

if (require.main === module) {
  const port = Number(process.env.PORT || 8787);
  if (!process.env.SOUL_WEBHOOK_SECRET) {
    console.warn('SOUL_WEBHOOK_SECRET is not set: every delivery to /webhooks is answered 500 until it is.');
  }
  createServer(nodeListener(createRuntime())).listen(port, () => {
    console.log(`{{name}} runtime listening on http://localhost:${port} (webhook deliveries at /webhooks)`);
  });
}

module.exports = { createRuntime, descriptor, installs };
