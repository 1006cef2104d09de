import { createHmac, timingSafeEqual } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, Server } from 'node:https';
import { AddressInfo } from 'node:net';
import { createRemoteJWKSet, errors as joseErrors, JWTPayload, jwtVerify, JWTVerifyGetKey } from 'jose';
import { cachedValidatorFor, CapabilityDescriptor } from '@soul-service/rules';
import { normaliseCapabilities } from '../../src/modules/descriptors/descriptor-normalizer';
import { anyServiceTrusted, trustedServiceKeys } from './service-keys';
import { testCertificate, TlsMaterial } from './test-ca';

export type RuntimeBehaviour =
  | 'conforming'
  | 'slow'
  | 'leaks_secrets'
  | 'wrong_envelope'
  | 'no_invalid_params'
  | 'no_auth_check'
  /** Asks for a bearer token but never verifies it: any string passes (the provider in issue 24's finding). */
  | 'accepts_any_token'
  /** State answers carry 300 KB of metadata, over the Free tier's 256 KB response limit. */
  | 'oversized'
  | 'down';

/** One scripted answer to the next `execute` call, replacing the normal handling (runtime bridge fault tests). */
export interface ScriptedAnswer {
  status: number;
  /** JSON body; ignored when `raw` is set. */
  body?: unknown;
  /** Raw body text, sent with `contentType` (default text/plain). */
  raw?: string;
  contentType?: string;
  /** Extra response headers (a `Location` for redirect tests). */
  headers?: Record<string, string>;
}

export interface RecordedRequest {
  method: string;
  /** Path with query string, as received. */
  path: string;
  /** Lower-case names, as Node parses them. */
  headers: Record<string, string | string[] | undefined>;
  rawBody: string;
  /** Parsed JSON body, or undefined when the body is empty or not JSON. */
  body: unknown;
  /** The claims of the runtime token, once verified (absent when the call was refused or not verified). */
  claims?: JWTPayload;
}

/** How a strict runtime verifies runtime tokens: exactly the steps of docs/runtime-auth.md, with the service's key set fetched over HTTP. */
export interface StrictVerification {
  /** `<service>/.well-known/jwks.json`. */
  jwksUrl: string;
  /** The service's issuer (its `PUBLIC_BASE_URL`). */
  issuer: string;
  /** This runtime's app id. */
  audience: string;
}

/** Why a runtime token was refused: the 401 answer of docs/runtime-auth.md. */
class Refused extends Error {
  constructor(
    readonly code: 'AUTH_EXPIRED' | 'AUTH_INVALID',
    message: string,
  ) {
    super(message);
  }
}

export const RUNTIME_TOKEN_TYPE = 'runtime+jwt';

export const RUNTIME_WEBHOOK_SECRET = 'whsec_provider-runtime-test-secret';
/** An AWS example key id (from AWS's documentation): what `leaks_secrets` puts in responses. */
export const LEAKED_AWS_KEY_ID = 'AKIAIOSFODNN7EXAMPLE';

const described = (type: string, description: string, extra: Record<string, unknown> = {}) => ({ type, description, ...extra });

/**
 * Capability descriptors (full form) of a small banking package that the
 * conforming runtime below implements and that passes every conformance check.
 */
export function goodPackageCapabilities(): unknown[] {
  return [
    {
      type: 'state',
      name: 'balance',
      description: 'Current available balance of one of the user’s bank accounts, refreshed every five minutes.',
      refreshInterval: 300,
      schema: {
        type: 'object',
        properties: { account: described('string', 'Which account to read the balance of.', { enum: ['checking', 'savings'] }) },
        required: ['account'],
        additionalProperties: false,
      },
      responseSchema: {
        type: 'object',
        properties: {
          available: described('number', 'Money available to spend, in the account currency.'),
          currency: described('string', 'ISO 4217 currency code of the account.', { enum: ['EUR', 'USD'] }),
        },
        required: ['available', 'currency'],
        additionalProperties: false,
      },
      surfaceGuidance: {
        intent: 'ambient_context',
        placement: ['home_widgets', 'daily_brief'],
        // No sparkline: the balance has no series, so one would never render (documentation.components_fit).
        preferredComponents: ['stat_row'],
      },
      examples: [{ params: { account: 'checking' }, response: { available: 1520.75, currency: 'EUR' } }],
    },
    {
      type: 'action',
      name: 'transfer',
      description: 'Sends money from the checking account to another account after the user confirms it.',
      schema: {
        type: 'object',
        properties: {
          toAccount: described('string', 'IBAN of the receiving account.', { minLength: 15, maxLength: 34 }),
          amount: described('number', 'Amount to send, in the given currency.', { minimum: 0.01, maximum: 10000 }),
          currency: described('string', 'ISO 4217 currency code of the amount.', { enum: ['EUR', 'USD'] }),
          reference: described('string', 'Text shown to the receiver.', { maxLength: 140 }),
        },
        required: ['toAccount', 'amount', 'currency'],
        additionalProperties: false,
      },
      responseSchema: {
        type: 'object',
        properties: {
          transferId: described('string', 'Identifier of the transfer at the bank.'),
          state: described('string', 'Whether the transfer is booked or waiting for the next business day.', {
            enum: ['completed', 'scheduled'],
          }),
        },
        required: ['transferId', 'state'],
      },
      surfaceGuidance: { intent: 'actionable_insight', placement: ['service_context'], preferredComponents: ['action_row', 'cta_banner'] },
      examples: [
        {
          input: { toAccount: 'DE89370400440532013000', amount: 25, currency: 'EUR', reference: 'Dinner' },
          response: { transferId: 'tr_0001', state: 'completed' },
        },
      ],
    },
    {
      type: 'history',
      name: 'transactions',
      description: 'Booked transactions of one account, newest first, for activity feeds and timelines.',
      schema: {
        type: 'object',
        properties: {
          account: described('string', 'Which account to list.', { enum: ['checking', 'savings'] }),
          limit: described('integer', 'Page size.', { minimum: 1, maximum: 50 }),
          cursor: described('string', 'Opaque cursor from the previous page.'),
          direction: described('string', 'Reading direction in time.', { enum: ['backward', 'forward'] }),
        },
        required: ['account'],
        additionalProperties: false,
      },
      responseSchema: {
        type: 'object',
        properties: {
          id: described('string', 'Transaction identifier.'),
          amount: described('number', 'Signed amount; negative for money going out.'),
          counterparty: described('string', 'Who the money came from or went to.'),
          bookedAt: described('string', 'When the bank booked the transaction (ISO 8601).'),
          tags: described('array', 'Categories the bank assigned.', { items: { type: 'string' }, maxItems: 5 }),
        },
        required: ['id', 'amount', 'bookedAt'],
      },
      surfaceGuidance: { intent: 'deep_dive', placement: ['service_context'], preferredComponents: ['ranked_list'] },
      examples: [
        {
          params: { account: 'checking', limit: 10, direction: 'backward' },
          response: { id: 'tx_025', amount: -12.5, counterparty: 'Bakery', bookedAt: '2024-01-15T09:30:00Z' },
        },
      ],
    },
    {
      type: 'realtime',
      name: 'ticker',
      description: 'Live exchange rate of EUR to USD, streamed while a surface shows it.',
      heartbeatInterval: 1,
      schema: {
        type: 'object',
        properties: { pair: described('string', 'Currency pair to follow.', { enum: ['EURUSD'] }) },
      },
      responseSchema: {
        type: 'object',
        properties: { pair: described('string', 'Currency pair.'), rate: described('number', 'Latest mid-market rate.') },
        required: ['pair', 'rate'],
      },
      surfaceGuidance: { intent: 'notification', placement: ['home_widgets'], preferredComponents: ['sparkline', 'stat_row'] },
      examples: [{ data: { pair: 'EURUSD', rate: 1.0842 } }],
    },
    {
      type: 'webhook',
      name: 'meeting_updates',
      description: 'Pushes changes to meetings with the user’s bank advisor as they happen.',
      schema: {
        type: 'object',
        properties: { meetingId: described('string', 'Meeting the event is about.') },
      },
      events: [
        {
          type: 'meeting.updated',
          description: 'A meeting with the advisor was moved, renamed or cancelled.',
          schema: {
            type: 'object',
            properties: {
              meetingId: described('string', 'Meeting identifier.'),
              title: described('string', 'Meeting title.'),
              startsAt: described('string', 'New start time (ISO 8601).'),
            },
            required: ['meetingId', 'startsAt'],
          },
        },
      ],
      surfaceGuidance: { intent: 'actionable_insight', placement: ['connection_profile'], preferredComponents: ['meeting_prep'] },
      examples: [{ event: 'meeting.updated', data: { meetingId: 'mtg_1', title: 'Mortgage review', startsAt: '2024-02-01T10:00:00Z' } }],
    },
  ];
}

const TRANSACTIONS = Array.from({ length: 25 }, (_, i) => ({
  id: `tx_${String(i + 1).padStart(3, '0')}`,
  amount: i % 3 === 0 ? 1000 - i : -(10 + i * 1.5),
  counterparty: ['Bakery', 'Employer', 'Rent', 'Bookshop'][i % 4],
  bookedAt: new Date(Date.UTC(2024, 0, 1 + i, 9, 30)).toISOString(),
  tags: i % 2 === 0 ? ['groceries'] : [],
}));

const errorBody = (code: string, message: string, retryable: boolean) => ({ status: 'error', error: { code, message, retryable } });

/**
 * A real HTTPS provider runtime on 127.0.0.1 implementing the runtime contract
 * (state, action, history, realtime SSE, and an outbound-webhook receiver at
 * `/webhooks` that verifies `X-Service-Signature`). Its behaviour can be switched
 * at run time to each fault the conformance suite must catch; every request it
 * receives is recorded.
 */
export class ProviderRuntime {
  readonly requests: RecordedRequest[] = [];
  readonly capabilities: CapabilityDescriptor[];
  behaviour: RuntimeBehaviour = 'conforming';
  /** Added to every answer (not to streams) while `slow`. */
  slowDelayMs = 3_000;
  /** The `ttl` of every state answer: 0 makes each answer stale at once, so every call through the service reaches the runtime. */
  stateTtl = 300;
  url = '';
  private server: Server;
  private port = 0;
  private readonly idempotency = new Map<string, { input: string; response: { status: number; body: unknown } }>();
  private readonly streams = new Set<ServerResponse>();
  /** Answers for the next `execute` calls, in order; each is used once. */
  readonly script: ScriptedAnswer[] = [];
  /** While true, new realtime streams open (200, headers) but never send an event: a stale stream. */
  streamSilent = false;
  /** While true, new realtime streams answer 200 text/event-stream and then send garbage: bytes, broken frames, bad JSON. */
  streamGarbage = false;
  /**
   * Set by `verifyStrictly`: tokens are verified against this issuer, audience
   * and key set only. Unset, a conforming runtime verifies signatures against
   * the services the test file started (`service-keys.ts`) and binds each
   * install to the audience of the first token that named it.
   */
  private strict?: StrictVerification & { keys: JWTVerifyGetKey };
  private readonly installAudience = new Map<string, string>();

  private constructor(
    readonly webhookSecret: string,
    capabilities: unknown[],
  ) {
    this.capabilities = normaliseCapabilities(capabilities);
  }

  static async start(
    /** `certificate`: the test CA's for 127.0.0.1 (trusted), a self-signed one (untrusted), or a key pair of your own (`certificateForHosts`). */
    options: { certificate?: 'trusted' | 'untrusted' | TlsMaterial; webhookSecret?: string; capabilities?: unknown[] } = {},
  ): Promise<ProviderRuntime> {
    const runtime = new ProviderRuntime(options.webhookSecret ?? RUNTIME_WEBHOOK_SECRET, options.capabilities ?? goodPackageCapabilities());
    const tls = typeof options.certificate === 'object' ? options.certificate : testCertificate(options.certificate ?? 'trusted');
    runtime.server = createServer(tls, (req, res) => {
      runtime.handle(req, res).catch((error: Error) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify(errorBody('INTERNAL_ERROR', error.message, true)));
      });
    });
    await runtime.listen(0);
    runtime.port = (runtime.server.address() as AddressInfo).port;
    runtime.url = `https://127.0.0.1:${runtime.port}`;
    return runtime;
  }

  /** Switches behaviour; `down` stops listening (connections are refused) until another behaviour is chosen. */
  async behave(behaviour: RuntimeBehaviour): Promise<void> {
    const wasDown = this.behaviour === 'down';
    this.behaviour = behaviour;
    if (behaviour === 'down' && !wasDown) await this.stopListening();
    if (behaviour !== 'down' && wasDown) await this.listen(this.port);
  }

  /** Verifies every token exactly as docs/runtime-auth.md says, with the service's JWKS fetched over HTTP (`undefined` turns it off). */
  verifyStrictly(verification: StrictVerification | undefined): void {
    this.strict = verification && { ...verification, keys: createRemoteJWKSet(new URL(verification.jwksUrl)) };
  }

  /** Queues answers for the next `execute` calls (any capability), used once each, in order. */
  scriptNext(...answers: ScriptedAnswer[]): void {
    this.script.push(...answers);
  }

  requestsTo(pathPrefix: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path.startsWith(pathPrefix));
  }

  clearRequests(): void {
    this.requests.length = 0;
  }

  async close(): Promise<void> {
    if (this.server.listening) await this.stopListening();
  }

  private listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, '127.0.0.1', () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  private stopListening(): Promise<void> {
    for (const stream of this.streams) stream.end();
    this.streams.clear();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined;
    } catch {
      body = undefined;
    }
    const path = req.url ?? '/';
    const recorded: RecordedRequest = { method: req.method ?? '', path, headers: { ...req.headers }, rawBody, body };
    this.requests.push(recorded);

    if (req.method === 'POST' && path === '/webhooks') return this.webhook(req, res, rawBody);
    const match = /^\/capabilities\/([^/]+)\/(execute|stream)$/.exec(path.split('?')[0]);
    const capability = match ? this.capabilities.find((c) => c.name === decodeURIComponent(match[1])) : undefined;
    const authorization = req.headers.authorization ?? '';
    const token = /^Bearer (\S+)$/.exec(authorization)?.[1];
    if (match && this.behaviour !== 'no_auth_check' && !token) {
      if (this.strict) return this.answer(res, 401, errorBody('AUTH_INVALID', 'a bearer token is required', false));
      return this.answer(res, 401, errorBody('AUTH_EXPIRED', 'a bearer token is required', true));
    }
    if (match && token && this.behaviour !== 'no_auth_check' && this.behaviour !== 'accepts_any_token') {
      try {
        recorded.claims = await this.verify(token, req);
      } catch (error) {
        if (!(error instanceof Refused)) throw error;
        return this.answer(res, 401, errorBody(error.code, error.message, error.code === 'AUTH_EXPIRED'));
      }
    }
    if (match?.[2] === 'stream' && req.method === 'GET' && capability?.type === 'realtime') return this.stream(req, res, capability);
    if (match?.[2] === 'execute' && req.method === 'POST' && capability && ['state', 'action', 'history'].includes(capability.type)) {
      return this.execute(req, res, capability, body, token ?? '');
    }
    return this.answer(res, 404, errorBody('NOT_FOUND', `no capability at ${path}`, false));
  }

  /**
   * docs/runtime-auth.md, "Verifying a runtime token": signature against the
   * service's key set, `typ`, issuer, audience, expiry, the claims present, and
   * `rid` and `livemode` equal to the request's headers. Expired: AUTH_EXPIRED;
   * anything else: AUTH_INVALID.
   */
  private async verify(token: string, req: IncomingMessage): Promise<JWTPayload | undefined> {
    if (!this.strict && !anyServiceTrusted()) return undefined;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.strict?.keys ?? trustedServiceKeys, {
        algorithms: ['ES256'],
        typ: RUNTIME_TOKEN_TYPE,
        ...(this.strict ? { issuer: this.strict.issuer, audience: this.strict.audience } : {}),
        requiredClaims: ['iss', 'aud', 'sub', 'exp', 'iat', 'jti', 'iid', 'rid'],
        clockTolerance: 30,
      }));
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw new Refused('AUTH_EXPIRED', 'the token has expired');
      throw new Refused('AUTH_INVALID', `the token is not valid (${(error as Error).message})`);
    }
    if (payload.rid !== req.headers['x-service-request-id']) throw new Refused('AUTH_INVALID', 'rid is not the X-Service-Request-Id');
    if (typeof payload.livemode !== 'boolean' || String(payload.livemode) !== req.headers['x-service-livemode']) {
      throw new Refused('AUTH_INVALID', 'livemode does not match X-Service-Livemode');
    }
    if (!this.strict) {
      // Without a configured audience: an install belongs to the app of the first token that named it.
      const audience = String(payload.aud);
      const iid = String(payload.iid);
      const bound = this.installAudience.get(iid) ?? audience;
      this.installAudience.set(iid, bound);
      if (bound !== audience) throw new Refused('AUTH_INVALID', 'the token is for another app');
    }
    return payload;
  }

  private async execute(
    req: IncomingMessage,
    res: ServerResponse,
    capability: CapabilityDescriptor,
    body: unknown,
    token: string,
  ): Promise<void> {
    const scripted = this.script.shift();
    if (scripted) {
      if (scripted.raw !== undefined) {
        res.writeHead(scripted.status, { 'Content-Type': scripted.contentType ?? 'text/plain', ...scripted.headers });
        return void res.end(scripted.raw);
      }
      return this.answer(res, scripted.status, scripted.body, scripted.headers);
    }
    const request = (body ?? {}) as {
      capability?: unknown;
      mode?: unknown;
      params?: Record<string, unknown>;
      input?: Record<string, unknown>;
    };
    const args = capability.type === 'action' ? request.input : request.params;
    if (this.behaviour !== 'no_invalid_params') {
      const problems: string[] = [];
      if (request.capability !== capability.name) problems.push('capability does not match the path');
      if (request.mode !== capability.type) problems.push(`mode must be ${capability.type}`);
      if (!req.headers['x-service-request-id']) problems.push('X-Service-Request-Id is required');
      if (capability.type === 'state' && !req.headers['x-service-user-id']) problems.push('X-Service-User-Id is required');
      if (capability.type === 'action' && !req.headers['x-service-idempotency-key']) problems.push('X-Service-Idempotency-Key is required');
      const result = cachedValidatorFor(capability.schema)(args);
      if (!result.valid) problems.push(...result.errors);
      if (problems.length > 0) return this.answer(res, 400, errorBody('INVALID_PARAMS', problems.join('; '), false));
    }

    if (capability.type === 'state') {
      const data = { available: 1520.75, currency: 'EUR' };
      const metadata: Record<string, unknown> = { source: 'core-banking', fetchedAt: new Date().toISOString() };
      if (this.behaviour === 'leaks_secrets')
        metadata.debug = { upstreamAuthorization: `Bearer ${token}`, awsAccessKeyId: LEAKED_AWS_KEY_ID };
      if (this.behaviour === 'oversized') metadata.trace = 'x'.repeat(300 * 1024);
      if (this.behaviour === 'wrong_envelope') return this.answer(res, 200, { balance: data, cachedFor: '5m' });
      return this.answer(res, 200, { status: 'ok', data, ttl: this.stateTtl, metadata });
    }

    if (capability.type === 'action') {
      const key = String(req.headers['x-service-idempotency-key'] ?? '');
      const input = JSON.stringify(args ?? {});
      const seen = this.idempotency.get(key);
      if (seen && seen.input !== input) {
        return this.answer(res, 409, errorBody('CONFLICT', 'this idempotency key was used with different input', false));
      }
      if (seen) return this.answer(res, seen.response.status, seen.response.body);
      const response = {
        status: 200,
        body:
          this.behaviour === 'wrong_envelope'
            ? { ok: true, transfer: { id: `tr_${this.idempotency.size + 1}` } }
            : { status: 'ok', result: { transferId: `tr_${this.idempotency.size + 1}`, state: 'completed' }, message: 'Transfer sent.' },
      };
      if (key) this.idempotency.set(key, { input, response });
      return this.answer(res, response.status, response.body);
    }

    const params = (args ?? {}) as { limit?: number; cursor?: string };
    const offset = params.cursor ? Number(JSON.parse(Buffer.from(params.cursor, 'base64url').toString('utf8')).offset) : 0;
    const limit = typeof params.limit === 'number' ? params.limit : 10;
    const newestFirst = [...TRANSACTIONS].reverse();
    const items = newestFirst.slice(offset, offset + limit);
    const hasMore = offset + limit < newestFirst.length;
    const next = hasMore ? Buffer.from(JSON.stringify({ offset: offset + limit })).toString('base64url') : null;
    if (this.behaviour === 'wrong_envelope') return this.answer(res, 200, { data: items, next });
    return this.answer(res, 200, { status: 'ok', items, cursor: { next, hasMore }, totalCount: newestFirst.length });
  }

  private stream(req: IncomingMessage, res: ServerResponse, capability: CapabilityDescriptor): void {
    if (!String(req.headers.accept ?? '').includes('text/event-stream')) {
      return void this.answer(res, 406, errorBody('INVALID_PARAMS', 'Accept: text/event-stream is required', false));
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
    if (this.streamSilent) {
      res.flushHeaders();
      this.streams.add(res);
      res.on('close', () => this.streams.delete(res));
      return;
    }
    if (this.streamGarbage) {
      const garbage = [
        Buffer.from([0xff, 0xfe, 0x00, 0x81, 0x0a]),
        'data: {not json\n\n',
        'event: data\ndata: [1,2\n\n',
        'event: data\ndata: "a string, not an object"\n\n',
        'event: data\ndata: null\n\n',
        `event: data\ndata: ${'9'.repeat(400)}\n\n`,
        'retry: -5\nid: \u0000\n\n',
        `: ${'x'.repeat(128 * 1024)}`,
        `data: ${'y'.repeat(256 * 1024)}\n\n`,
        'event: heartbeat\ndata: {"ts":"yesterday"}\n\n',
      ];
      let i = 0;
      // A stream ended by stopListening can tick once more before 'close' clears the timer: never write after the end.
      const timer = setInterval(() => {
        if (!res.writableEnded && !res.destroyed) res.write(garbage[i++ % garbage.length]);
      }, 20);
      this.streams.add(res);
      res.on('close', () => {
        clearInterval(timer);
        this.streams.delete(res);
      });
      return;
    }
    const send = (event: string, data: unknown) => {
      if (!res.writableEnded && !res.destroyed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    // A heartbeat at once, then at the declared interval, so a fresh connection is never silent.
    send('heartbeat', { ts: new Date().toISOString() });
    let rate = 1.08;
    const data = setInterval(() => {
      rate += 0.0001;
      send('data', { pair: 'EURUSD', rate: Number(rate.toFixed(4)) });
    }, 250);
    const heartbeat = setInterval(() => send('heartbeat', { ts: new Date().toISOString() }), (capability.heartbeatInterval ?? 1) * 1000);
    this.streams.add(res);
    res.on('close', () => {
      clearInterval(data);
      clearInterval(heartbeat);
      this.streams.delete(res);
    });
  }

  private webhook(req: IncomingMessage, res: ServerResponse, rawBody: string): Promise<void> {
    if (this.behaviour !== 'no_auth_check') {
      const header = String(req.headers['x-service-signature'] ?? '');
      const expected = Buffer.from(createHmac('sha256', this.webhookSecret).update(rawBody).digest('hex'));
      const given = Buffer.from(header.startsWith('sha256=') ? header.slice('sha256='.length) : '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return this.answer(res, 401, { error: 'invalid signature' });
      }
    }
    return this.answer(res, 200, { received: true });
  }

  private async answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): Promise<void> {
    if (this.behaviour === 'slow') await new Promise((r) => setTimeout(r, this.slowDelayMs));
    if (res.destroyed) return;
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }
}
