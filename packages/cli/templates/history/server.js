// @ts-check
/**
 * The runtime of {{name}}: one `history` capability, `past_meetings`.
 *
 * The service calls `POST /capabilities/past_meetings/execute` with the params of its schema plus `limit`,
 * `cursor` and `direction`, and pages through the list with the cursor this runtime answers. The SDK verifies
 * every call's runtime token, refuses params that do not fit soul-package.json with 400 INVALID_PARAMS and
 * answers the history envelope; this file says where the list comes from.
 */
const { readFileSync } = require('node:fs');
const { createServer } = require('node:http');
const { join } = require('node:path');
const { defineRuntime, nodeListener, pageOf } = require('@soul-service/runtime-sdk');

/** @typedef {import('@soul-service/runtime-sdk').PackageDescriptor} PackageDescriptor */
/** @typedef {import('@soul-service/runtime-sdk').RuntimeOptions<PackageDescriptor>} RuntimeOptions */
/** @typedef {{ calendar: 'work' | 'personal' }} MeetingParams the capability's `schema` (paging params aside) */
/** @typedef {{ id: string, title: string, startsAt: string, durationMinutes: number }} Meeting its `responseSchema`: one item */

/** The package descriptor: what `soul validate` checks, `soul push` sends and the SDK serves. */
const descriptor = /** @type {PackageDescriptor} */ (JSON.parse(readFileSync(join(__dirname, 'soul-package.json'), 'utf8')));

const HOUR_MS = 60 * 60 * 1000;
const WEEK_MS = 7 * 24 * HOUR_MS;
/** ISO 8601 without the milliseconds a meeting never has: `2025-03-14T09:00:00Z`. */
const iso = (/** @type {number} */ ms) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');

/**
 * Test traffic (conformance runs, `livemode: false`) pages through this list, never a user's real calendar: the
 * example item of soul-package.json, once a week for 30 weeks, newest first. More than one page, so conformance
 * can check that the cursor leads to the next one.
 */
const example = /** @type {Meeting} */ (descriptor.capabilities[0].examples?.[0]?.response);
const TEST_MEETINGS = Array.from({ length: 30 }, (_, i) => ({
  ...example,
  id: `mtg_test_${30 - i}`,
  startsAt: iso(Date.parse(example.startsAt) - i * WEEK_MS),
}));

/**
 * Your data source. This stand-in gives every user the same meetings in the past weeks; replace it with calls to
 * your API for the account of `userId` (the user the service acts for, from the verified token).
 *
 * @param {string} _userId
 * @param {MeetingParams['calendar']} calendar
 * @returns {Promise<Meeting[]>} newest first
 */
async function pastMeetings(_userId, calendar) {
  const thisHour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
  return Array.from({ length: 12 }, (_, i) => ({
    id: `mtg_${calendar}_${12 - i}`,
    title: calendar === 'work' ? 'Team planning' : 'Book club',
    startsAt: iso(thisHour - (i + 1) * WEEK_MS),
    durationMinutes: 60,
  }));
}

/** @type {import('@soul-service/runtime-sdk').HistoryHandler} */
async function listPastMeetings(params, call) {
  // The SDK has checked the params against the schema, and `limit`, `cursor` and `direction`, before this runs.
  const { calendar } = /** @type {MeetingParams} */ (params);
  const meetings = call.livemode ? await pastMeetings(call.userId, calendar) : TEST_MEETINGS;
  // One page of `limit` items from the cursor on, and the cursor of the next page (null on the last one).
  return pageOf(meetings, params);
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
    handlers: { past_meetings: listPastMeetings },
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
