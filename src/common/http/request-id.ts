import type { IncomingMessage } from 'node:http';
import { newId } from '../ids';

export const REQUEST_ID_HEADER = 'x-service-request-id';
const WELL_FORMED = /^req_[A-Za-z0-9]{8,64}$/;

/**
 * Fastify `genReqId`: keeps the caller's `X-Service-Request-Id` when it is a
 * well-formed `req_` id (so a trace spans services), otherwise mints one. The id
 * is also set on the raw request, where the HTTP logger reads it.
 */
export function requestIdFor(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  const id = typeof given === 'string' && WELL_FORMED.test(given) ? given : newId('req');
  (req as IncomingMessage & { id: string }).id = id;
  return id;
}
