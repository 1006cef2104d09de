import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signWebhook } from '@soul-service/webhooks';
import { exportJWK, generateKeyPair, JSONWebKeySet, JWK, KeyLike, SignJWT } from 'jose';
import { CapabilityMode, PackageDescriptor, resolveCapabilities } from './descriptor';
import type { RequestAnswerer } from './adapters';
import type { ResolvedCapability } from './descriptor';
import { RUNTIME_TOKEN_TYPE } from './verify';

/**
 * The test kit (`@soul-service/runtime-sdk/testing`): a stand-in for the
 * service's side of a runtime call. It holds an ES256 key like the service's,
 * publishes its JWKS (as an object, or over loopback HTTP like
 * `/.well-known/jwks.json`), mints runtime tokens with exactly the service's
 * claims and headers, and calls a runtime as the service would.
 */
export interface TokenOptions {
  userId?: string;
  installId?: string;
  requestId?: string;
  scopes?: string[];
  livemode?: boolean;
  /** Another app's id: the token the runtime must refuse. */
  audience?: string;
  issuer?: string;
  issuedAt?: Date;
  /** Lifetime in seconds (the service's is 300). */
  ttlSeconds?: number;
  typ?: string;
  /** Claims to add or (with `undefined`) to remove. */
  claims?: Record<string, unknown>;
}

export interface ServiceCall extends TokenOptions {
  /** `params` of a state or history call. */
  params?: Record<string, unknown>;
  /** `input` of an action call. */
  input?: Record<string, unknown>;
  idempotencyKey?: string;
  confirmationId?: string;
  locale?: string;
  timezone?: string;
  /** Replaces the minted token (`null`: no Authorization header). */
  token?: string | null;
  /** Headers to add or override. */
  headers?: Record<string, string>;
}

/** Any answer of a runtime, success or error envelope, loosely typed for assertions. */
export interface AnswerBody {
  status: 'ok' | 'degraded' | 'error';
  error?: { code: string; message: string; retryable: boolean; retryAfter?: number; field?: string };
  data?: Record<string, unknown>;
  result?: Record<string, unknown>;
  message?: string;
  items?: Array<Record<string, unknown>>;
  cursor?: { next: string | null; hasMore: boolean };
  totalCount?: number;
  ttl?: number;
  metadata?: { source: string; fetchedAt: string };
}

/** A runtime as the kit calls it: `defineRuntime`'s answer, whatever its descriptor type. */
export type CallableRuntime = RequestAnswerer & { capabilities: ReadonlyMap<string, ResolvedCapability> };

const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;

export class RuntimeTestKit {
  private server?: Server;
  /** How many times the served key set was fetched (`serveJwks`): shows a runtime caches it. */
  jwksFetches = 0;

  private constructor(
    readonly serviceUrl: string,
    readonly appId: string,
    readonly kid: string,
    private readonly privateKey: KeyLike,
    readonly jwks: JSONWebKeySet,
  ) {}

  /** A kit with a fresh ES256 key. `serviceUrl` defaults to a made-up issuer; see `serveJwks` for a real one. */
  static async create(options: { serviceUrl?: string; appId?: string } = {}): Promise<RuntimeTestKit> {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const kid = randomUUID();
    const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' };
    return new RuntimeTestKit(options.serviceUrl ?? 'https://service.test', options.appId ?? id('app'), kid, privateKey, {
      keys: [jwk],
    });
  }

  /**
   * Serves the key set at `http://127.0.0.1:<port>/.well-known/jwks.json` and
   * answers a kit whose issuer is that address, so a runtime configured with
   * only `serviceUrl` fetches the keys as it would from the service.
   */
  async serveJwks(): Promise<RuntimeTestKit> {
    const box: { served?: RuntimeTestKit } = {};
    const server = createServer((req, res) => {
      if (req.url !== '/.well-known/jwks.json' || !box.served) {
        res.writeHead(404).end();
        return;
      }
      box.served.jwksFetches += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.jwks));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const served = new RuntimeTestKit(`http://127.0.0.1:${port}`, this.appId, this.kid, this.privateKey, this.jwks);
    served.server = server;
    box.served = served;
    return served;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** A runtime token as `RuntimeTokens.mint` makes it, for one call. */
  async token(options: TokenOptions = {}): Promise<string> {
    return this.sign(this.privateKey, options);
  }

  /** The same header (`kid` included) and claims, signed by a key the service never published: must be refused. */
  async forgedToken(options: TokenOptions = {}): Promise<string> {
    const { privateKey } = await generateKeyPair('ES256');
    return this.sign(privateKey, options);
  }

  private async sign(key: KeyLike, options: TokenOptions): Promise<string> {
    const userId = options.userId ?? 'usr_testkit0000000000000000';
    const iat = Math.floor((options.issuedAt ?? new Date()).getTime() / 1000);
    const claims: Record<string, unknown> = {
      uid: userId,
      iid: options.installId ?? 'inst_testkit000000000000000',
      rid: options.requestId ?? 'req_testkit0000000000000000',
      scope: (options.scopes ?? []).join(' '),
      livemode: options.livemode ?? true,
      ...options.claims,
    };
    for (const [name, value] of Object.entries(claims)) if (value === undefined) delete claims[name];
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: this.kid, typ: options.typ ?? RUNTIME_TOKEN_TYPE })
      .setIssuer(options.issuer ?? this.serviceUrl)
      .setAudience(options.audience ?? this.appId)
      .setSubject(userId)
      .setJti(randomUUID())
      .setIssuedAt(iat)
      .setExpirationTime(iat + (options.ttlSeconds ?? 300))
      .sign(key);
  }

  /** The headers of a call of `mode`, with a token minted for its request id. */
  async headers(mode: CapabilityMode, call: ServiceCall = {}): Promise<Record<string, string>> {
    const requestId = call.requestId ?? id('req');
    const livemode = call.livemode ?? true;
    const token = call.token === undefined ? await this.token({ ...call, requestId, livemode }) : call.token;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-service-request-id': requestId,
      'x-service-livemode': String(livemode),
    };
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (mode === 'state') headers['x-service-user-id'] = call.userId ?? 'usr_testkit0000000000000000';
    if (mode === 'action') headers['x-service-idempotency-key'] = call.idempotencyKey ?? id('idem');
    if (mode === 'realtime') headers.accept = 'text/event-stream';
    return { ...headers, ...call.headers };
  }

  /** The body the service sends for `capability` (docs/runtime-bridge.md). */
  body(capability: string, mode: CapabilityMode, call: ServiceCall = {}): Record<string, unknown> {
    const userId = call.userId ?? 'usr_testkit0000000000000000';
    if (mode === 'action') {
      return { capability, mode, input: call.input ?? {}, context: { userId, confirmationId: call.confirmationId ?? id('act') } };
    }
    const context = {
      userId,
      installId: call.installId ?? 'inst_testkit000000000000000',
      locale: call.locale ?? 'en',
      timezone: call.timezone ?? 'UTC',
    };
    return { capability, mode, params: call.params ?? {}, context };
  }

  /**
   * A webhook delivery as the service sends one to the app's URL: the exact
   * body and every signature header (`X-Service-Signature`, Standard Webhooks),
   * signed with `secret` (and `previousSecret` during a rotation).
   */
  signedDelivery(
    event: { id?: string; type: string; data: Record<string, unknown> },
    secret: string,
    options: { previousSecret?: string; livemode?: boolean; timestamp?: Date } = {},
  ): { headers: Record<string, string>; body: string } {
    const envelope = {
      id: event.id ?? id('evt'),
      type: event.type,
      created_at: new Date().toISOString(),
      app_id: this.appId,
      idempotency_key: id('idem'),
      data: event.data,
    };
    const body = JSON.stringify(envelope);
    const headers = signWebhook({
      secret,
      previousSecret: options.previousSecret,
      payload: body,
      id: envelope.id,
      timestamp: options.timestamp,
    });
    return {
      headers: { ...headers, 'content-type': 'application/json', 'x-service-livemode': String(options.livemode ?? true) },
      body,
    };
  }

  /** Calls `capability` of `runtime` in process, as the service would over HTTP; answers the status and JSON body. */
  async execute(runtime: CallableRuntime, capability: string, call: ServiceCall = {}): Promise<{ status: number; body: AnswerBody }> {
    const mode = runtime.capabilities.get(capability)?.type ?? 'state';
    const reply = await runtime.handle({
      method: 'POST',
      url: `/capabilities/${encodeURIComponent(capability)}/execute`,
      headers: await this.headers(mode, call),
      body: Buffer.from(JSON.stringify(this.body(capability, mode, call))),
    });
    if (reply.kind !== 'json') throw new Error(`${capability} answered a stream; open it over HTTP with kit.headers('realtime')`);
    return { status: reply.status, body: reply.body as AnswerBody };
  }
}

/** One example of the descriptor, as a call to make and the answer it documents. */
export interface Fixture {
  capability: string;
  mode: CapabilityMode;
  /** `params` (state, history) or `input` (action) to call with. */
  request: Record<string, unknown>;
  /** The documented `response` (state data, action result, one history item) or `data` (realtime, webhook). */
  response: unknown;
  event?: string;
}

/** The descriptor's `examples`, ready to call with (`kit.execute(runtime, f.capability, { params: f.request })`). */
export function fixtures(descriptor: PackageDescriptor): Fixture[] {
  return resolveCapabilities(descriptor).flatMap((capability) =>
    capability.examples.map((example) => {
      const request = (capability.type === 'action' ? example.input : example.params) ?? {};
      return {
        capability: capability.name,
        mode: capability.type,
        request: request as Record<string, unknown>,
        response: 'response' in example ? example.response : example.data,
        ...(typeof example.event === 'string' ? { event: example.event } : {}),
      };
    }),
  );
}
