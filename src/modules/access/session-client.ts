/** Longest `User-Agent` kept with a session: enough for any real browser, bounded for a hostile one. */
export const MAX_USER_AGENT_LENGTH = 512;

/** The client that opened a session, as the sign-in request showed it. */
export interface SessionClient {
  userAgent: string | null;
  ipAddress: string | null;
}

/** Browsers and systems named in session lists, checked in order (Edge and Opera also say "Chrome", Chrome also says "Safari"). */
const BROWSERS: Array<[RegExp, string]> = [
  [/\bEdg(e|A|iOS)?\//, 'Edge'],
  [/\bOPR\/|\bOpera\b/, 'Opera'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/Chrom(e|ium)\/|\bCriOS\//, 'Chrome'],
  [/\bSafari\//, 'Safari'],
];
const SYSTEMS: Array<[RegExp, string]> = [
  [/\bAndroid\b/, 'Android'],
  [/\biPhone\b|\biPad\b|\biOS\b/, 'iOS'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bLinux\b/, 'Linux'],
];

/** The client as stored: the `User-Agent` cut to a bounded length, control characters dropped; empty values become null. */
export function sessionClient(userAgent: string | undefined, ipAddress: string | undefined): SessionClient {
  const agent = (userAgent ?? '')
    // eslint-disable-next-line no-control-regex -- control characters are what is removed
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim()
    .slice(0, MAX_USER_AGENT_LENGTH);
  return { userAgent: agent || null, ipAddress: ipAddress || null };
}

/**
 * A short description of a session's client for people ("Firefox on Linux",
 * as GitHub and Google list sessions), from its `User-Agent`; a client that is
 * no known browser (a script, a CLI) is named by the agent's first word.
 */
export function describeClient(userAgent: string | null): string {
  if (!userAgent) return 'Unknown client';
  const browser = BROWSERS.find(([pattern]) => pattern.test(userAgent))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1];
  if (browser) return system ? `${browser} on ${system}` : browser;
  const product = userAgent.split(/[\s/]/)[0].slice(0, 40);
  return system ? `${product} on ${system}` : product;
}
