import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError } from 'fastify';
import type { ErrorEnvelopeFilter } from '../errors/error.filter';
import type { RateLimits } from '../rate-limit/rate-limits.service';
import { newId } from '../ids';
import { REQUEST_ID_HEADER } from './request-id';

/**
 * Fastify's `clientErrorHandler`: what Node's HTTP parser refuses (a request that did not arrive within
 * `requestTimeout`/`headersTimeout`, headers over the limit, bytes that are not HTTP) never becomes a
 * request, so no hook runs. Answered on the socket in the path's envelope with a fresh request id, as
 * Fastify's default handler does with its own body, then the connection is closed.
 */
export function clientErrorHandler(
  filter: ErrorEnvelopeFilter,
  limits: () => RateLimits | undefined,
): (error: ConnectionError, socket: Socket) => void {
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const answer = filter.clientErrorAnswer(error);
    // An API answer reports the per-address limit like every other (read without counting, see bootstrap).
    const rateLimits = answer.path.startsWith('/v1/') ? limits() : undefined;
    const headers = rateLimits
      ? rateLimits.peekForAddress(socket.remoteAddress ?? '').then(
          (d) => `X-RateLimit-Limit: ${d.limit}\r\nX-RateLimit-Remaining: ${d.remaining}\r\nX-RateLimit-Reset: ${d.resetAt}\r\n`,
          () => '',
        )
      : Promise.resolve('');
    void headers.then((rateHeaders) => {
      if (socket.writable) {
        socket.write(
          `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'Error'}\r\n` +
            `Content-Type: ${answer.contentType}\r\n` +
            `Content-Length: ${Buffer.byteLength(answer.body)}\r\n` +
            `${REQUEST_ID_HEADER}: ${newId('req')}\r\n` +
            rateHeaders +
            'Connection: close\r\n\r\n' +
            answer.body,
        );
      }
      socket.destroy(error);
    });
  };
}
