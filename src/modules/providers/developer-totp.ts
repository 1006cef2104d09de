import { authenticator } from 'otplib';

const STEP_SECONDS = 30;

/**
 * The RFC 6238 time step whose code `code` is, judged at `now`, or null when
 * it is not the code of an accepted step (only the current one: otplib's
 * default window of 0).
 */
export function matchingTotpStep(secret: string, code: string, now = Date.now()): number | null {
  const delta = authenticator.clone({ epoch: now }).checkDelta(code, secret);
  return delta === null ? null : Math.floor(now / 1000 / STEP_SECONDS) + delta;
}
