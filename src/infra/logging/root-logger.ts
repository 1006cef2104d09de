import { hostname } from 'node:os';
import pino, { Logger as Pino } from 'pino';

/** Paths of values that must never reach a log line. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-signature-256"]',
  'req.query.token',
  'res.headers["set-cookie"]',
  // Each secret field at the top of a line's fields and one level down (pino's `*` matches one level).
  ...['password', 'client_secret', 'webhook_secret', 'secret', 'token', 'access_token', 'refresh_token', 'firebase_token'].flatMap(
    (field) => [field, `*.${field}`],
  ),
];

/**
 * The process's one pino logger. Everything logs through it directly: no child
 * logger per request and no `AsyncLocalStorage` context (see `request-log.ts`
 * for why), so a log line costs nothing when its level is off.
 */
export function createRootLogger(options: { level: string; role: string }): Pino {
  return pino({
    level: options.level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { pid: process.pid, hostname: hostname(), role: options.role },
  });
}
