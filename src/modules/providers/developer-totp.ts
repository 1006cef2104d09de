import { authenticator } from 'otplib';
import { DataSource, EntityManager } from 'typeorm';

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

/**
 * Accepts a code's step for a developer once (RFC 6238 §5.2): the step is
 * stored only when it is later than the last accepted one, in one conditional
 * UPDATE, so of concurrent requests with the same code, on any api instance,
 * exactly one gets true.
 */
export async function claimTotpStep(db: DataSource | EntityManager, developerId: string, step: number): Promise<boolean> {
  // UPDATE … RETURNING answers [rows, affectedCount] through TypeORM's PostgreSQL driver.
  const [rows]: [Array<{ id: string }>, number] = await db.query(
    `UPDATE developers SET mfa_last_step = $2 WHERE id = $1 AND (mfa_last_step IS NULL OR mfa_last_step < $2) RETURNING id`,
    [developerId, step],
  );
  return rows.length === 1;
}
