// The part every example runtime shares: configuration, an HTTPS server that routes the runtime contract's
// paths, verification of the service's runtime tokens, and the runtime error envelope.
//
// Each mode's runtime.mjs (state, action, history, realtime, webhook) imports this file and adds only its
// capability. Node 20+ and one dependency, `jose` 5 (npm install jose).
//
// The contract served here (docs/runtime-bridge.md, docs/runtime-auth.md):
//   POST /capabilities/<name>/execute   state, action and history calls (JSON in, JSON out)
//   GET  /capabilities/<name>/stream    realtime streams (Server-Sent Events)
// Every call carries `Authorization: Bearer <runtime token>`, `X-Service-Request-Id` and `X-Service-Livemode`.
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { URL } from 'node:url';
import { createRemoteJWKSet, errors, jwtVerify } from 'jose';

/**
 * The runtime's settings, from environment variables:
 *
 * - `SERVICE_URL` (required): the service's base URL. The key set is fetched from `<SERVICE_URL>/.well-known/jwks.json`.
 * - `TOKEN_ISSUER`: the `iss` of runtime tokens, the service's public base URL (`PUBLIC_BASE_URL`). Default: `SERVICE_URL`;
 *   set it only when you reach the service at another address than its public one (local development).
 * - `JWKS_URL`: where the service's public keys are. Default: `<SERVICE_URL>/.well-known/jwks.json`.
 * - `APP_ID` (required): your app's id (`app_…`). Runtime tokens for any other app are refused.
 * - `TLS_CERT`, `TLS_KEY` (required): paths of the PEM certificate chain and key. The service calls runtimes over HTTPS only.
 * - `PORT` (default 8443; 0 picks a free port) and `HOST` (default 0.0.0.0).
 */
export function configFromEnv(env = process.env) {
  const required = (name) => {
    const value = env[name];
    if (!value) throw new Error(`${name} is required (see the top of docs/examples/shared/runtime.mjs)`);
    return value;
  };
  const serviceUrl = required('SERVICE_URL').replace(/\/+$/, '');
  return {
    serviceUrl,
    issuer: env.TOKEN_ISSUER || serviceUrl,
    jwksUrl: env.JWKS_URL || `${serviceUrl}/.well-known/jwks.json`,
    appId: required('APP_ID'),
    tls: { cert: readFileSync(required('TLS_CERT')), key: readFileSync(required('TLS_KEY')) },
    port: Number(env.PORT ?? 8443),
    host: env.HOST || '0.0.0.0',
  };
}

/**
 * A failed call, answered with the runtime error envelope:
 * `{ status: 'error', error: { code, message, retryable } }` with the HTTP status the spec gives the code.
 * The service reads `code` to decide whether to retry, and may show `message` to the user: never put secrets in it.
 */
export class RuntimeError extends Error {
  static STATUS = {
    INVALID_PARAMS: 400,
    AUTH_INVALID: 401,
    AUTH_EXPIRED: 401,
    PERMISSION_DENIED: 403,
    NOT_FOUND: 404,
    CONFLICT: 409,
    RATE_LIMITED: 429,
    INTERNAL_ERROR: 500,
    UPSTREAM_UNAVAILABLE: 503,
  };
  static RETRYABLE = new Set(['AUTH_EXPIRED', 'RATE_LIMITED', 'INTERNAL_ERROR', 'UPSTREAM_UNAVAILABLE']);

  constructor(code, message) {
    super(message);
    this.code = code;
  }

  get status() {
    return RuntimeError.STATUS[this.code] ?? 500;
  }

  get body() {
    return { status: 'error', error: { code: this.code, message: this.message, retryable: RuntimeError.RETRYABLE.has(this.code) } };
  }
}

/**
 * Verifies the runtime token of a call exactly as docs/runtime-auth.md says, offline, with the service's public keys:
 * ES256, `typ: runtime+jwt`, the configured issuer, `aud` = this app, not expired (30 s of clock skew), the claims
 * present, and `rid` and `livemode` equal to the `X-Service-Request-Id` and `X-Service-Livemode` headers.
 * Returns the claims; throws a RuntimeError (401) otherwise.
 */
export function tokenVerifier({ issuer, jwksUrl, appId }) {
  // Fetches the key set once, caches it, and refetches when a token names an unknown `kid` (a key rotation).
  const keys = createRemoteJWKSet(new URL(jwksUrl));
  return async function verify(headers) {
    const token = /^Bearer (\S+)$/.exec(headers.authorization ?? '')?.[1];
    if (!token) throw new RuntimeError('AUTH_INVALID', 'a bearer token is required');
    let claims;
    try {
      ({ payload: claims } = await jwtVerify(token, keys, {
        algorithms: ['ES256'],
        typ: 'runtime+jwt',
        issuer,
        audience: appId,
        requiredClaims: ['sub', 'iid', 'rid', 'jti', 'iat', 'exp'],
        clockTolerance: 30,
      }));
    } catch (error) {
      // Only an expired token is AUTH_EXPIRED: the service then mints a fresh one and retries once.
      // Anything else is AUTH_INVALID, which the service never retries (a new token would fail the same way).
      if (error instanceof errors.JWTExpired) throw new RuntimeError('AUTH_EXPIRED', 'the token has expired');
      throw new RuntimeError('AUTH_INVALID', 'the token is not valid');
    }
    if (claims.rid !== headers['x-service-request-id']) throw new RuntimeError('AUTH_INVALID', 'rid does not match the request');
    if (String(claims.livemode) !== headers['x-service-livemode']) {
      throw new RuntimeError('AUTH_INVALID', 'livemode does not match the request');
    }
    // claims.sub: the user, claims.iid: the install, claims.livemode: false for test traffic (conformance).
    return claims;
  };
}

/**
 * The problems of `value` against a capability's JSON Schema (empty: valid). Checks the keywords the example
 * packages use: type, properties, required, additionalProperties: false, enum, minimum/maximum, minLength/maxLength
 * and items. A real runtime would use a full validator (Ajv) with the same schema: validate against the schema you
 * declared, so the service's check before the call and yours agree.
 */
export function schemaProblems(schema, value, at = 'params') {
  const types = [schema.type].flat();
  const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);
  const actual = typeOf(value);
  if (schema.type && !types.includes(actual) && !(actual === 'integer' && types.includes('number'))) {
    return [`${at} must be ${types.join(' or ')}`];
  }
  const problems = [];
  if (schema.enum && !schema.enum.includes(value)) problems.push(`${at} must be one of ${schema.enum.join(', ')}`);
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) problems.push(`${at} must be >= ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${at} must be <= ${schema.maximum}`);
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength) problems.push(`${at} is too short`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength) problems.push(`${at} is too long`);
  }
  if (Array.isArray(value) && schema.items) value.forEach((item, i) => problems.push(...schemaProblems(schema.items, item, `${at}[${i}]`)));
  if (actual === 'object') {
    const properties = schema.properties ?? {};
    for (const name of schema.required ?? []) if (!(name in value)) problems.push(`${at}.${name} is required`);
    for (const [name, item] of Object.entries(value)) {
      if (Object.hasOwn(properties, name)) problems.push(...schemaProblems(properties[name], item, `${at}.${name}`));
      else if (schema.additionalProperties === false) problems.push(`${at}.${name} is not a known field`);
    }
  }
  return problems;
}

/**
 * One capability descriptor from the package.json next to a runtime (`import.meta.url` of that runtime): the runtime
 * checks its params against the very schema it registered, so the two cannot drift apart.
 */
export function capabilityDescriptor(runtimeModuleUrl, name) {
  const pkg = JSON.parse(readFileSync(new URL('./package.json', runtimeModuleUrl), 'utf8'));
  const capability = pkg.capabilities.find((c) => c.name === name);
  if (!capability) throw new Error(`package.json has no capability named ${name}`);
  return capability;
}

/** A path segment as a capability name; a malformed escape names no capability. */
function decodeName(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new RuntimeError('NOT_FOUND', 'no such capability');
  }
}

/** Largest request body read; the service's requests are small. */
const MAX_BODY_BYTES = 64 * 1024;

async function readJson(req) {
  let size = 0;
  const chunks = [];
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new RuntimeError('INVALID_PARAMS', 'the request body is too large');
    chunks.push(chunk);
  }
  let body;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
  } catch {
    throw new RuntimeError('INVALID_PARAMS', 'the request body is not JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new RuntimeError('INVALID_PARAMS', 'the body must be an object');
  return body;
}

export function sendJson(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(body));
}

/**
 * Checks the parts of an execute request that every mode shares: the body names the capability and mode of the path,
 * and the mode's own header is there. Returns the problems found (empty: fine).
 */
export function envelopeProblems(name, mode, body, headers) {
  const problems = [];
  if (body.capability !== name) problems.push('capability does not match the path');
  if (body.mode !== mode) problems.push(`mode must be ${mode}`);
  if (mode === 'state' && !headers['x-service-user-id']) problems.push('X-Service-User-Id is required');
  if (mode === 'action' && !headers['x-service-idempotency-key']) problems.push('X-Service-Idempotency-Key is required');
  return problems;
}

/**
 * Starts the HTTPS runtime. `capabilities` maps a capability name to its handler:
 *
 * - `{ mode: 'state' | 'action' | 'history', execute(call) }`: `execute` gets `{ body, headers, claims, live }` and
 *   returns the mode's success envelope (or throws a RuntimeError);
 * - `{ mode: 'realtime', stream(call) }`: `stream` gets `{ req, res, claims, live }` and owns the response.
 *
 * `routes` adds other paths (`'POST /webhooks'`: a receiver of the service's outbound webhooks), called with
 * `(req, res)` and no runtime token: they authenticate their own way.
 *
 * The token is verified before anything else, also for unknown capabilities: a caller without a valid token learns
 * nothing, not even which capabilities exist.
 */
export async function startRuntime({ config = configFromEnv(), capabilities, routes = {}, log = console.log }) {
  const verify = tokenVerifier(config);

  const handle = async (req, res) => {
    const path = new URL(req.url ?? '/', 'https://runtime.invalid').pathname;
    const route = routes[`${req.method} ${path}`];
    if (route) return route(req, res);

    const match = /^\/capabilities\/([^/]+)\/(execute|stream)$/.exec(path);
    if (!match) throw new RuntimeError('NOT_FOUND', 'no such path');
    const claims = await verify(req.headers);
    const live = claims.livemode === true;
    const name = decodeName(match[1]);
    const capability = Object.hasOwn(capabilities, name) ? capabilities[name] : undefined;

    if (match[2] === 'stream' && req.method === 'GET' && capability?.mode === 'realtime') {
      if (!String(req.headers.accept ?? '').includes('text/event-stream')) {
        throw new RuntimeError('INVALID_PARAMS', 'Accept: text/event-stream is required');
      }
      return capability.stream({ req, res, claims, live });
    }
    if (match[2] === 'execute' && req.method === 'POST' && capability?.execute) {
      const body = await readJson(req);
      return sendJson(res, 200, await capability.execute({ body, headers: req.headers, claims, live }));
    }
    throw new RuntimeError('NOT_FOUND', `no capability "${name}" here`);
  };

  const server = createServer(config.tls, (req, res) => {
    handle(req, res).catch((error) => {
      const failure = error instanceof RuntimeError ? error : new RuntimeError('INTERNAL_ERROR', 'unexpected error');
      if (!(error instanceof RuntimeError)) console.error(error);
      if (res.headersSent) return void res.end();
      sendJson(res, failure.status, failure.body);
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const { port } = server.address();
  const url = `https://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${port}`;
  log(`runtime listening on ${url} for app ${config.appId}`);
  // Stop cleanly on Ctrl-C or a container stop: open streams are ended, then the server closes.
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    });
  }
  return { server, url, config };
}
