import { buildEvent, WebhookVerificationError } from '@soul-service/webhooks';

/** Secrets in the service's shape: `whsec_` + base64 of 32 bytes. */
export const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwC2FVsBQIhrs=';
export const PREVIOUS_SECRET = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oDMfKQ9r8GKYo=';
export const OTHER_SECRET = 'whsec_9Zt3Yq1b8m0cQ4lW7xV2nR6kJ5hG1fD0sA8pO3iU2eM=';

/** A delivery body as the service serialises it, with non-ASCII text so bytes and characters differ. */
export function deliveryBody(): string {
  return buildEvent({
    type: 'install.created',
    id: 'evt_Q2mXb7Kp0aLr9VnT3sYw1cDe',
    app_id: 'app_7hJk2LmN4pQr6StU8vWx0yZa',
    created_at: new Date('2026-01-05T10:00:00.000Z'),
    data: {
      install_id: 'inst_1',
      user_id: 'usr_1',
      package_id: 'pkg_1',
      version: '1.0.0',
      scopes_granted: ['profile:read'],
      note: 'naïve – ünïcode',
    },
  }).body;
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** Header names as Node's `req.headers` has them. */
export function lower(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/** Runs `fn` and returns the verification error it throws; fails when it throws nothing or something else. */
export function refusal(fn: () => unknown): WebhookVerificationError {
  try {
    fn();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error;
    throw error;
  }
  throw new Error('expected a WebhookVerificationError, nothing was thrown');
}
