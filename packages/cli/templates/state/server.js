// @ts-check
/**
 * The runtime of {{name}}: one `state` capability, `agenda_today`.
 *
 * The service polls `POST /capabilities/agenda_today/execute` every `refreshInterval` seconds for each install
 * and shows the answer on the user's home widget. The SDK verifies every call's runtime token, refuses params
 * that do not fit soul-package.json with 400 INVALID_PARAMS and answers the state envelope; this file says
 * where the data comes from.
 */
const { readFileSync } = require('node:fs');
const { createServer } = require('node:http');
const { join } = require('node:path');
const { defineRuntime, nodeListener } = require('@soul-service/runtime-sdk');

/** @typedef {import('@soul-service/runtime-sdk').PackageDescriptor} PackageDescriptor */
/** @typedef {import('@soul-service/runtime-sdk').RuntimeOptions<PackageDescriptor>} RuntimeOptions */
/** @typedef {{ calendar: 'work' | 'personal' }} AgendaParams the capability's `schema` */
/** @typedef {{ meetings: number, busyHours: number, nextMeetingAt?: string }} Agenda its `responseSchema` */

/** The package descriptor: what `soul validate` checks, `soul push` sends and the SDK serves. */
const descriptor = /** @type {PackageDescriptor} */ (JSON.parse(readFileSync(join(__dirname, 'soul-package.json'), 'utf8')));

/**
 * Test traffic (conformance runs, `livemode: false`) gets the example documented in soul-package.json, never a
 * user's real calendar. Conformance checks that example against the responseSchema, so this answer is valid.
 */
const TEST_AGENDA = /** @type {Agenda} */ (descriptor.capabilities[0].examples?.[0]?.response);

/**
 * Your data source. This stand-in gives every user the same few meetings today; replace it with calls to your
 * API for the account of `userId` (the user the service acts for, from the verified token).
 *
 * @param {string} _userId
 * @param {AgendaParams['calendar']} calendar
 * @returns {Promise<Array<{ startsAt: Date, minutes: number }>>}
 */
async function meetingsToday(_userId, calendar) {
  const at = (/** @type {number} */ hour) => new Date(new Date().setUTCHours(hour, 0, 0, 0));
  return calendar === 'work'
    ? [
        { startsAt: at(9), minutes: 30 },
        { startsAt: at(11), minutes: 60 },
        { startsAt: at(14), minutes: 90 },
        { startsAt: at(16), minutes: 30 },
      ]
    : [{ startsAt: at(19), minutes: 120 }];
}

/** @type {import('@soul-service/runtime-sdk').StateHandler} */
async function agendaToday(params, call) {
  if (!call.livemode) return { data: TEST_AGENDA };
  // The SDK has checked the params against the schema before calling this handler.
  const { calendar } = /** @type {AgendaParams} */ (params);
  const meetings = await meetingsToday(call.userId, calendar);
  const next = meetings.map((m) => m.startsAt).find((startsAt) => startsAt.getTime() > Date.now());
  /** @type {Agenda} */
  const data = {
    meetings: meetings.length,
    busyHours: meetings.reduce((hours, m) => hours + m.minutes / 60, 0),
    ...(next ? { nextMeetingAt: next.toISOString() } : {}),
  };
  // The service caches the answer for `ttl` seconds (default: the capability's refreshInterval).
  return { data, source: 'calendar' };
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
    handlers: { agenda_today: agendaToday },
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
