// Example runtime for a `webhook` capability: `meeting_updates` (docs/examples/webhook/package.json).
//
// In webhook mode the service never calls you for data: you push events to it. This runtime shows both directions:
//
// 1. It receives the service's outbound webhooks at `POST /webhooks` (register `https://<this host>/webhooks` as the
//    app's `webhook_url`) and verifies `X-Service-Signature` over the raw body before reading it.
// 2. When a user installs the package (`install.created`, live traffic only), it pushes that user's next advisor meeting
//    to `POST <SERVICE_URL>/v1/providers/runtime/webhook`, with an app token (client credentials, `events:write`)
//    and `X-Signature-256`, an HMAC of the raw body with the same signing secret.
//
// It still serves `/capabilities/…` with token verification, so conformance's error handling and security probes
// reach a runtime that answers like the others. Run it with the settings of ../shared/runtime.mjs plus:
//
//   WEBHOOK_SECRET=whsec_…  the app's webhook signing secret (shown once, when the webhook profile is created)
//   CLIENT_ID=… CLIENT_SECRET=…  the app's credentials, for the app token that pushes events
/* global fetch -- Node 18+ */
import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { URLSearchParams } from 'node:url';
import { configFromEnv, sendJson, startRuntime } from '../shared/runtime.mjs';

const config = configFromEnv();
const WEBHOOK_SECRET = process.env.WEBHOOK_SECRET;
const CLIENT_ID = process.env.CLIENT_ID;
const CLIENT_SECRET = process.env.CLIENT_SECRET;
if (!WEBHOOK_SECRET || !CLIENT_ID || !CLIENT_SECRET) throw new Error('WEBHOOK_SECRET, CLIENT_ID and CLIENT_SECRET are required');

const sign = (rawBody) => `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(rawBody).digest('hex')}`;

/** Constant-time comparison of the signature header with our own HMAC of the exact bytes received. */
function signatureValid(header, rawBody) {
  if (typeof header !== 'string' || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(sign(rawBody));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

// Delivery is at least once: remember the idempotency keys already handled and skip repeats.
// (A database table in production, kept for as long as retries can come: 24 hours.)
const HANDLED = new Set();

async function receiveWebhook(req, res) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const rawBody = Buffer.concat(chunks);
  // Verify before parsing: an unsigned body is not read at all. 401 tells the service not to retry.
  if (!signatureValid(req.headers['x-service-signature'], rawBody)) return sendJson(res, 401, { error: 'invalid signature' });
  let event;
  try {
    event = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return sendJson(res, 400, { error: 'the body is not JSON' });
  }
  if (HANDLED.has(event.idempotency_key)) return sendJson(res, 200, { received: true, duplicate: true });
  HANDLED.add(event.idempotency_key);

  // Test events and conformance probes (`X-Service-Livemode: false`) are acknowledged and otherwise ignored.
  const live = req.headers['x-service-livemode'] === 'true';
  if (live && event.type === 'install.created') {
    // Answer at once (202) and do the work afterwards: the service waits 5 s at most for an answer.
    pushNextMeeting(event.data.user_id).catch((error) => console.error(`push for ${event.data.user_id} failed: ${error.message}`));
    return sendJson(res, 202, { received: true });
  }
  return sendJson(res, 200, { received: true });
}

// --- pushing events to the service -------------------------------------------------------------------------------

let appToken; // { value, expiresAt }

/** An app token from the client_credentials grant, reused until a minute before it expires (1 hour by default). */
async function accessToken() {
  if (appToken && appToken.expiresAt > Date.now() + 60_000) return appToken.value;
  const res = await fetch(`${config.serviceUrl}/v1/auth/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'events:write' }),
  });
  if (!res.ok) throw new Error(`token request answered ${res.status}`);
  const body = await res.json();
  appToken = { value: body.access_token, expiresAt: Date.now() + body.expires_in * 1000 };
  return appToken.value;
}

/** Sends one event; retries 429 and 5xx a few times, honouring Retry-After, and gives up on other errors. */
async function pushEvent(event) {
  // Serialise once and sign exactly these bytes: the service checks the HMAC over the raw body it receives.
  const rawBody = JSON.stringify(event);
  for (let attempt = 1; ; attempt += 1) {
    const res = await fetch(`${config.serviceUrl}/v1/providers/runtime/webhook`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await accessToken()}`, 'content-type': 'application/json', 'x-signature-256': sign(rawBody) },
      body: rawBody,
    });
    if (res.status === 202) return res.json(); // { status: 'accepted', event_id, processed_at }
    if (res.status === 401)
      appToken = undefined; // an expired token: fetch a new one and try again
    else if (res.status !== 429 && res.status < 500) throw new Error(`event refused: ${res.status} ${await res.text()}`);
    if (attempt === 3) throw new Error(`event not accepted after ${attempt} attempts: ${res.status}`);
    await sleep(Number(res.headers.get('retry-after') ?? attempt) * 1000);
  }
}

async function pushNextMeeting(userId) {
  // Stands in for your calendar: every new user gets a welcome call tomorrow at 10:00 UTC.
  const tomorrow = new Date(Date.now() + 24 * 3600 * 1000);
  tomorrow.setUTCHours(10, 0, 0, 0);
  const accepted = await pushEvent({
    event: 'meeting.updated',
    action: 'scheduled',
    // Within 5 minutes of the service's clock: older or future timestamps are refused as replays.
    timestamp: new Date().toISOString(),
    userId,
    data: { meetingId: `mtg_welcome_${userId}`, title: 'Welcome call', startsAt: tomorrow.toISOString() },
  });
  console.log(`pushed meeting.updated for ${userId}: ${accepted.event_id}`);
}

// No capability is executable in webhook mode: every `/capabilities/…` call answers 404 NOT_FOUND once its token
// has been verified (401 before that).
await startRuntime({ config, capabilities: {}, routes: { 'POST /webhooks': receiveWebhook } });
