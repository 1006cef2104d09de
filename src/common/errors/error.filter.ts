import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Inject, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { ApiError, ApiErrorCode } from './api-error';
import { envelopeFor, problemCodeForStatus, problemTitle, userCodeForStatus } from './envelope';
import { ProblemError, ProblemExtras } from './problem-error';
import { RequestValidationError } from './request-validation.error';

/** An error reduced to what both envelopes need. */
interface Failure {
  status: number;
  userCode: ApiErrorCode;
  problemCode: string;
  message: string;
  extras: ProblemExtras;
  headers: Record<string, string>;
  unexpected: boolean;
  /** A dependency outage: logged once per request as a warning, without the stack. */
  unavailable?: boolean;
  /** The path itself is the bad input: `instance` leaves out its over-long segments instead of echoing them. */
  opaquePath?: boolean;
}

/** Fastify's `maxParamLength`: no id, slug or name the service issues comes near it. */
export const MAX_PATH_PARAM_LENGTH = 100;

function withoutLongSegments(path: string): string {
  return path
    .split('/')
    .map((segment) => (segment.length > MAX_PATH_PARAM_LENGTH ? '…' : segment))
    .join('/');
}

/**
 * Fixed messages for what Fastify refuses on its own: its messages are not part of our contract, and
 * none of these may echo input (a content type, a URL).
 */
const FRAMEWORK_MESSAGES: Record<string, { status: number; message: string }> = {
  FST_ERR_MAX_PARAM_LENGTH: {
    status: 400,
    message: `A path parameter is longer than ${MAX_PATH_PARAM_LENGTH} characters; no identifier is that long`,
  },
  FST_ERR_BAD_URL: { status: 400, message: 'A path parameter is not valid percent-encoded UTF-8' },
};
const FRAMEWORK_STATUS_MESSAGES: Record<number, string> = {
  404: 'Route not found',
  405: 'Method not allowed on this route',
  413: 'Request body is larger than the 1 MiB limit',
  415: 'Content-Type is not supported by this route; send application/json',
};

/**
 * The one place errors become responses. User routes answer
 * `{ error: { code, message, status } }`; provider platform, OAuth token and
 * operator routes answer RFC 9457 problem details.
 */
@Catch()
export class ErrorEnvelopeFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') return;
    const http = host.switchToHttp();
    this.render(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }

  /**
   * Also called by Fastify's `frameworkErrors` (src/bootstrap.ts) for what its router refuses before any
   * hook or Nest code runs: an over-long or badly encoded path parameter.
   */
  render(exception: unknown, request: FastifyRequest, reply: FastifyReply): void {
    const failure = this.describe(exception);

    if (failure.unexpected) {
      this.logger.error({ err: exception, reqId: request.id, url: request.url }, 'unhandled error');
    } else if (failure.unavailable) {
      this.logger.warn({ reqId: request.id, url: request.url, cause: (exception as Error)?.message }, 'dependency unavailable');
    }
    if (reply.sent) return;

    for (const [name, value] of Object.entries(failure.headers)) reply.header(name, value);
    const answer = this.envelope(failure, request.url);
    void reply.status(failure.status).type(answer.contentType).send(answer.body);
  }

  /**
   * The answer to what Node's HTTP parser refuses before Fastify has a request (Fastify's
   * `clientErrorHandler`): a request that did not arrive in time (408), headers over the limit (431), bytes
   * that are not HTTP (400). The envelope follows the request line when the parser kept it.
   */
  clientErrorAnswer(error: { code?: unknown; rawPacket?: unknown }): { status: number; contentType: string; body: string; path: string } {
    const failure = this.describe(clientError(error));
    const requestLine = Buffer.isBuffer(error.rawPacket) ? /^[A-Z]+ (\/[^ \r\n]*) HTTP\//.exec(error.rawPacket.toString('latin1')) : null;
    const path = requestLine?.[1] ?? '/';
    const answer = this.envelope({ ...failure, opaquePath: true }, path);
    return { status: failure.status, contentType: answer.contentType, body: JSON.stringify(answer.body), path };
  }

  private envelope(failure: Failure, url: string): { contentType: string; body: object } {
    const path = failure.opaquePath ? withoutLongSegments(url.split('?')[0]) : url.split('?')[0];
    if (envelopeFor(url) === 'problem') {
      return {
        contentType: 'application/problem+json',
        body: {
          type: `${this.config.docsUrl}/developers/errors#${failure.problemCode}`,
          title: problemTitle(failure.problemCode),
          status: failure.status,
          detail: failure.message,
          instance: path,
          ...failure.extras,
        },
      };
    }
    return {
      contentType: 'application/json',
      body: { error: { code: failure.userCode, message: failure.message, status: failure.status } },
    };
  }

  private describe(exception: unknown): Failure {
    const base = { extras: {}, headers: {}, unexpected: false };
    if (exception instanceof ApiError) {
      return {
        ...base,
        status: exception.status,
        userCode: exception.code,
        problemCode: problemCodeForStatus(exception.status),
        message: exception.message,
        headers: exception.headers,
      };
    }
    if (exception instanceof ProblemError) {
      return {
        ...base,
        status: exception.status,
        userCode: userCodeForStatus(exception.status),
        problemCode: exception.code,
        message: exception.detail,
        extras: exception.extras,
        headers: exception.headers,
      };
    }
    if (exception instanceof RequestValidationError) {
      const first = exception.issues[0];
      return {
        ...base,
        status: 400,
        userCode: 'BAD_REQUEST',
        problemCode: first.missing ? 'missing_field' : 'invalid_format',
        message: exception.message,
        extras: first.field ? { field: first.field } : {},
      };
    }
    const frameworkCode = String((exception as { code?: unknown })?.code);
    const framework = Object.hasOwn(FRAMEWORK_MESSAGES, frameworkCode) ? FRAMEWORK_MESSAGES[frameworkCode] : undefined;
    if (framework) {
      return {
        ...base,
        status: framework.status,
        userCode: userCodeForStatus(framework.status),
        problemCode: 'invalid_format',
        message: framework.message,
        opaquePath: true,
      };
    }
    if (isMalformedBody(exception)) {
      return { ...base, status: 400, userCode: 'BAD_REQUEST', problemCode: 'invalid_format', message: 'Request body is not valid JSON' };
    }
    if (isUnstorableText(exception)) {
      return {
        ...base,
        status: 400,
        userCode: 'BAD_REQUEST',
        problemCode: 'invalid_format',
        message: 'Text must not contain NUL characters (\\u0000) or invalid Unicode',
      };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const response = exception.getResponse();
      const inner = typeof response === 'string' ? response : (response as { message?: unknown }).message;
      const message = typeof inner === 'string' ? inner : Array.isArray(inner) ? inner.join('; ') : exception.message;
      return {
        ...base,
        status,
        userCode: userCodeForStatus(status),
        problemCode: problemCodeForStatus(status),
        message: FRAMEWORK_STATUS_MESSAGES[status] ?? message,
        unexpected: status >= 500,
      };
    }
    if (isDependencyUnavailable(exception)) {
      // Our outage, not the caller's mistake: retryable, like readiness turning 503 at the same time.
      return {
        ...base,
        status: 503,
        userCode: 'SERVICE_UNAVAILABLE',
        problemCode: 'service_unavailable',
        message: 'A service this request depends on is unavailable; try again shortly',
        headers: { 'Retry-After': '5' },
        unavailable: true,
      };
    }
    // Errors raised by Fastify itself before a handler runs (body parsing, size limits).
    const fastifyError = exception as { statusCode?: unknown; code?: unknown; message?: unknown };
    if (typeof fastifyError?.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
      const status = fastifyError.statusCode;
      return {
        ...base,
        status,
        userCode: userCodeForStatus(status),
        problemCode: problemCodeForStatus(status),
        message: String(fastifyError.message),
      };
    }
    return {
      ...base,
      status: 500,
      userCode: 'INTERNAL_ERROR',
      problemCode: 'internal_error',
      message: 'An unexpected error occurred',
      unexpected: true,
    };
  }
}

/** Node's `clientError` codes as a plain 4xx error the filter describes with a fixed message. */
function clientError(error: { code?: unknown }): { statusCode: number; message: string } {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return { statusCode: 408, message: 'The request did not arrive in time' };
  if (error.code === 'HPE_HEADER_OVERFLOW') return { statusCode: 431, message: 'Request headers are larger than the server accepts' };
  return { statusCode: 400, message: 'The request is not valid HTTP' };
}

/** Fastify's body parser failures, whichever wrapper they arrive in. */
function isMalformedBody(exception: unknown): boolean {
  const candidates = [exception, (exception as { cause?: unknown })?.cause];
  return candidates.some((e) => {
    const { code, message } = (e ?? {}) as { code?: unknown; message?: unknown };
    return (
      code === 'FST_ERR_CTP_INVALID_JSON_BODY' ||
      code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ||
      /is not valid JSON|Body cannot be empty/.test(String(message))
    );
  });
}

/**
 * PostgreSQL refusing text it cannot store: NUL in `text` (22021) or in `jsonb` (22P05). The input
 * is the caller's mistake, so it answers 400 rather than 500; nothing was written (the statement failed).
 */
function isUnstorableText(exception: unknown): boolean {
  const driverError = (exception as { driverError?: { code?: unknown } })?.driverError;
  const code = driverError?.code ?? (exception as { code?: unknown })?.code;
  return code === '22021' || code === '22P05';
}

/** Connection-level SQLSTATEs: class 08 (connection exception), shutdown in progress, server starting, out of connection slots. */
const UNAVAILABLE_SQLSTATE = /^(08...|57P01|57P02|57P03|53300)$/;
const UNAVAILABLE_ERRNO = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);
/** What node-postgres says when a connection drops or the pool cannot open one in time. */
const UNAVAILABLE_MESSAGE = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/**
 * PostgreSQL (or another peer) cannot be reached, is shutting down or is
 * starting: found by the PostgreSQL restart fault test, these used to answer
 * 500. The driver's error arrives bare (pool checkout) or wrapped by TypeORM
 * in `driverError`.
 */
export function isDependencyUnavailable(exception: unknown): boolean {
  const candidates = [exception, (exception as { driverError?: unknown })?.driverError, (exception as { cause?: unknown })?.cause];
  return candidates.some((e) => {
    if (!e || typeof e !== 'object') return false;
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_ERRNO.has(code))) return true;
    return typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message);
  });
}
