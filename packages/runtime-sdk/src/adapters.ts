import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorEnvelope } from './errors';
import type { RuntimeReply, RuntimeRequest } from './runtime';

/**
 * How a runtime is served: Node's `http`/`https`, Fastify and Express. Each
 * hands the runtime the body's raw bytes (never a re-serialised parse) and
 * writes its reply; none of them needs the framework as a dependency of the SDK.
 */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

export interface NodeAdapterOptions {
  /** Largest request body read; larger ones are refused before the runtime sees them. Default 1 MiB. */
  maxBodyBytes?: number;
}

/** What an adapter serves: anything that answers runtime requests (a `Runtime`). */
export interface RequestAnswerer {
  handle(request: RuntimeRequest): Promise<RuntimeReply>;
  /** Whether the path is one of its routes. */
  matches(path: string): boolean;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

class BodyTooLarge extends Error {}

/** The body's bytes, refusing more than `maxBytes` while they stream in. */
export function readBody(req: IncomingMessage, maxBytes = DEFAULT_MAX_BODY_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.removeAllListeners('data');
        req.resume();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** Writes a reply on a Node response: JSON with the status, or the SSE stream. */
export async function writeReply(reply: RuntimeReply, res: ServerResponse): Promise<void> {
  if (reply.kind === 'stream') return reply.open(res);
  const text = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

async function serve(runtime: RequestAnswerer, req: IncomingMessage, res: ServerResponse, body: Promise<Buffer>): Promise<void> {
  let raw: Buffer;
  try {
    raw = await body;
  } catch (error) {
    const message = error instanceof BodyTooLarge ? 'the request body is too large' : 'the request body could not be read';
    await writeReply({ kind: 'json', status: 400, body: errorEnvelope('INVALID_PARAMS', message, { field: 'body' }) }, res);
    return;
  }
  const reply = await runtime.handle({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body: raw });
  await writeReply(reply, res);
}

function failSafe(res: ServerResponse, error: unknown): void {
  console.error('[runtime-sdk] could not answer', error);
  if (!res.headersSent) void writeReply({ kind: 'json', status: 500, body: errorEnvelope('INTERNAL_ERROR', 'the runtime failed') }, res);
  else res.destroy();
}

export function nodeListener(runtime: RequestAnswerer, options: NodeAdapterOptions = {}): NodeListener {
  return (req, res) => {
    serve(runtime, req, res, readBody(req, options.maxBodyBytes)).catch((error: unknown) => failSafe(res, error));
  };
}

// --- Fastify --------------------------------------------------------------------

/** The parts of a Fastify (4 or 5) instance the plugin uses. */
export interface FastifyInstanceLike {
  removeAllContentTypeParsers(): void;
  addContentTypeParser(
    type: string,
    options: { parseAs: 'buffer'; bodyLimit?: number },
    parser: (request: unknown, body: Buffer, done: (error: Error | null, body?: unknown) => void) => void,
  ): void;
  route(options: {
    method: string[];
    url: string;
    handler: (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<unknown>;
  }): void;
}

interface FastifyRequestLike {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body?: unknown;
}

interface FastifyReplyLike {
  raw: ServerResponse;
  hijack(): void;
  code(status: number): FastifyReplyLike;
  header(name: string, value: string): FastifyReplyLike;
  send(payload: string): FastifyReplyLike;
}

export type FastifyPluginLike = (instance: FastifyInstanceLike, options: Record<string, unknown>) => Promise<void>;

/**
 * An encapsulated plugin: inside it, every content type is read as a Buffer
 * (the raw bytes), which changes nothing for the rest of the application.
 */
export function fastifyPlugin(runtime: RequestAnswerer, options: { webhookPath?: string } = {}): FastifyPluginLike {
  return async (instance) => {
    instance.removeAllContentTypeParsers();
    instance.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    const handler = async (request: FastifyRequestLike, reply: FastifyReplyLike) => {
      const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const answer = await runtime.handle({ method: request.method, url: request.url, headers: request.headers, body });
      if (answer.kind === 'json') {
        return reply
          .code(answer.status)
          .header('content-type', 'application/json; charset=utf-8')
          .header('cache-control', 'no-store')
          .send(JSON.stringify(answer.body));
      }
      // The stream is written on the raw response for as long as it lasts; Fastify must not answer it too.
      reply.hijack();
      await answer.open(reply.raw);
      return reply;
    };
    instance.route({ method: ['GET', 'POST'], url: '/capabilities/:name/:operation', handler });
    if (options.webhookPath) instance.route({ method: ['POST'], url: options.webhookPath, handler });
  };
}

// --- Express ---------------------------------------------------------------------

export type ExpressMiddleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

type ExpressRequest = IncomingMessage & { path?: string; body?: unknown; rawBody?: unknown; _body?: boolean };

/**
 * Serves the capability routes and passes every other request on. Mount it
 * before `express.json()`: the runtime reads the raw body itself. Behind a
 * parser that kept the bytes (`express.raw()`, or a `verify` hook setting
 * `req.rawBody`) it uses those; behind one that did not, it refuses to guess.
 */
export function expressMiddleware(runtime: RequestAnswerer): ExpressMiddleware {
  return (incoming, res, next) => {
    const req = incoming as ExpressRequest;
    const path = req.path ?? (req.url ?? '/').split('?')[0];
    if (!runtime.matches(path)) {
      next();
      return;
    }
    let body: Promise<Buffer>;
    if (Buffer.isBuffer(req.body)) body = Promise.resolve(req.body);
    else if (Buffer.isBuffer(req.rawBody)) body = Promise.resolve(req.rawBody);
    else if (req._body || req.readableEnded) {
      next(new Error('runtime-sdk: a body parser read the request before the runtime; mount runtime.express() before express.json()'));
      return;
    } else body = readBody(req);
    serve(runtime, req, res, body).catch((error: unknown) => failSafe(res, error));
  };
}
