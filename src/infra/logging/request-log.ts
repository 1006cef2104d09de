import type { FastifyInstance } from 'fastify';
import type { Logger as Pino } from 'pino';

/**
 * One line per answered request, written when the answer is sent:
 * `request completed` (or `request errored` for a 5xx) with the request id,
 * method, URL (a `token` query parameter redacted), status and time.
 *
 * This replaces pino-http with nestjs-pino's middleware, which made a child
 * logger and an `AsyncLocalStorage` context for every request (and needed
 * Nest's middleware engine): about a fifth of the CPU of a small request, paid
 * even with request logging off. The price is that lines logged while a request
 * runs do not carry its id by themselves; code that logs about a request names
 * it (the error filter logs the id of the request that failed).
 * Successful liveness and readiness probes are not logged: they are the
 * orchestrator asking every few seconds, not traffic.
 */
export function registerRequestLog(fastify: FastifyInstance, logger: Pino): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode;
    const level = status >= 500 ? 'error' : 'info';
    if (logger.isLevelEnabled(level) && !(status < 400 && request.url.startsWith('/health/'))) {
      logger[level](
        {
          req: { id: request.id, method: request.method, url: request.url.replace(/([?&]token=)[^&]+/, '$1[redacted]') },
          res: { statusCode: status },
          responseTime: Math.round(reply.elapsedTime),
        },
        status >= 500 ? 'request errored' : 'request completed',
      );
    }
    done();
  });
}
