import type { Response } from 'supertest';

/** Paths that speak RFC 9457 problem details (docs/decisions.md, "Which error envelope for which path?"). */
export function isPlatformPath(path: string): boolean {
  return /^\/v1\/(providers|operator)(\/|$|\?)/.test(path) || /^\/v1\/auth\/token(\/|$|\?)/.test(path);
}

/**
 * Asserts that an error answer is a clean envelope of the dialect its path speaks:
 * `{ error: { code, message, status } }` on the user API, problem details on the platform.
 * Never a 5xx unless `allow5xx` names it (a real outage such as 503).
 */
export function expectCleanError(res: Response, path: string, options: { status?: number; code?: string; allow5xx?: number[] } = {}): void {
  const context = `${res.status} on ${path}: ${res.text.slice(0, 500)}`;
  if (options.status !== undefined) expect({ status: res.status, context }).toEqual({ status: options.status, context });
  expect({ errorStatus: res.status >= 400, context }).toEqual({ errorStatus: true, context });
  if (res.status >= 500 && !(options.allow5xx ?? []).includes(res.status)) throw new Error(`server error ${context}`);
  if (isPlatformPath(path)) {
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toEqual(
      expect.objectContaining({
        type: expect.stringMatching(/^https?:\/\/.+#[a-z_]+$/),
        title: expect.any(String),
        status: res.status,
        detail: expect.any(String),
        instance: expect.any(String),
      }),
    );
    if (options.code) expect(res.body.type).toMatch(new RegExp(`#${options.code}$`));
  } else {
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ error: { code: expect.stringMatching(/^[A-Z_]+$/), message: expect.any(String), status: res.status } });
    if (options.code) expect(res.body.error.code).toBe(options.code);
  }
}
