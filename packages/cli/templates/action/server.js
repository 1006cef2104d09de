// @ts-check
/**
 * The runtime of {{name}}: one `action` capability, `book_meeting`.
 *
 * The service asks the user to confirm an action before it calls `POST /capabilities/book_meeting/execute`,
 * and sends an `X-Service-Idempotency-Key` with it. The SDK verifies every call's runtime token, refuses input
 * that does not fit soul-package.json with 400 INVALID_PARAMS and runs the handler once per idempotency key: a
 * retry gets the first answer again, and the same key with other input is refused with 409 CONFLICT.
 */
const { readFileSync } = require('node:fs');
const { createServer } = require('node:http');
const { join } = require('node:path');
const { defineRuntime, nodeListener, RuntimeError } = require('@soul-service/runtime-sdk');

/** @typedef {import('@soul-service/runtime-sdk').PackageDescriptor} PackageDescriptor */
/** @typedef {import('@soul-service/runtime-sdk').RuntimeOptions<PackageDescriptor>} RuntimeOptions */
/** @typedef {{ title: string, startsAt: string, durationMinutes?: number }} BookingInput the capability's `schema` */
/** @typedef {{ meetingId: string, startsAt: string, endsAt: string }} Booking its `responseSchema` */

/** The package descriptor: what `soul validate` checks, `soul push` sends and the SDK serves. */
const descriptor = /** @type {PackageDescriptor} */ (JSON.parse(readFileSync(join(__dirname, 'soul-package.json'), 'utf8')));

/** The meeting id test bookings answer with: the one of the example in soul-package.json. */
const example = /** @type {{ response: Booking }} */ (descriptor.capabilities[0].examples?.[0]);
const TEST_MEETING_ID = example.response.meetingId;

/**
 * Your calendar API. This stand-in keeps each user's meetings in memory; replace it with calls to your API for
 * the account of `userId` (the user the service acts for, from the verified token).
 */
const calendar = {
  /** @type {Map<string, Array<{ id: string, title: string, startsAt: Date, endsAt: Date }>>} */
  meetings: new Map(),

  /**
   * @param {string} userId
   * @param {{ title: string, startsAt: Date, endsAt: Date }} meeting
   */
  async book(userId, meeting) {
    const booked = this.meetings.get(userId) ?? [];
    const clash = booked.find((other) => other.startsAt < meeting.endsAt && meeting.startsAt < other.endsAt);
    // A refusal that a retry cannot change: not retryable, so the SDK keeps it as this idempotency key's answer.
    if (clash) throw new RuntimeError('CONFLICT', `The calendar already has "${clash.title}" at that time.`);
    const id = `mtg_${booked.length + 1}`;
    this.meetings.set(userId, [...booked, { id, ...meeting }]);
    return id;
  },
};

/** ISO 8601 without the milliseconds a booking never has: `2025-03-14T13:30:00Z`. */
const iso = (/** @type {Date} */ date) => date.toISOString().replace(/\.000Z$/, 'Z');

/** @type {import('@soul-service/runtime-sdk').ActionHandler} */
async function bookMeeting(input, call) {
  // The SDK has checked the input against the schema before calling this handler.
  const { title, startsAt, durationMinutes = 30 } = /** @type {BookingInput} */ (input);
  const start = new Date(startsAt);
  const end = new Date(start.getTime() + durationMinutes * 60_000);
  const times = { startsAt: iso(start), endsAt: iso(end) };
  // Test traffic (conformance runs, `livemode: false`) never books anything.
  if (!call.livemode) {
    return { result: { meetingId: TEST_MEETING_ID, ...times }, message: `Test booking: "${title}" was not put on any calendar.` };
  }
  const meetingId = await calendar.book(call.userId, { title, startsAt: start, endsAt: end });
  /** @type {Booking} */
  const result = { meetingId, ...times };
  // The message is shown to the user: say what happened, in a sentence.
  return { result, message: `Booked "${title}" on your calendar.` };
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
    handlers: { book_meeting: bookMeeting },
    // Answers are kept per idempotency key in this process's memory. Running several instances? Give them one
    // store to share: `idempotency: { store: new RedisIdempotencyStore(redis) }` (see the SDK's README).
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
