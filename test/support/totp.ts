import { setTimeout as sleep } from 'node:timers/promises';
import { authenticator } from 'otplib';

const STEP_MS = 30_000;

/** The RFC 6238 time step (30 s) of an instant. */
export function totpStep(at = Date.now()): number {
  return Math.floor(at / STEP_MS);
}

/**
 * The current code of `secret`, from a time step later than `afterStep` (the
 * service accepts one code per step and account, and the code that confirmed
 * enrolment counts) with at least `marginMs` of that step left, so every
 * request sent with it lands in the same step. Waits at most about one step.
 */
export async function freshTotp(secret: string, { afterStep = -1, marginMs = 3_000 } = {}): Promise<{ code: string; step: number }> {
  for (let waits = 0; ; waits += 1) {
    const now = Date.now();
    const step = totpStep(now);
    const left = (step + 1) * STEP_MS - now;
    if (step > afterStep && left >= marginMs) return { code: authenticator.clone({ epoch: now }).generate(secret), step };
    if (waits > 2) throw new Error(`no usable TOTP step after ${afterStep} (now ${step})`);
    await sleep(left + 10);
  }
}
