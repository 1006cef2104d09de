import { randomBytes } from 'node:crypto';
import { INBOUND_SIGNATURE_HEADER, signInboundWebhook } from '@soul-service/webhooks';
import type { CapabilityMode, FromSchema, PackageDescriptor } from './descriptor';

/** Where events go and where the app token comes from (docs/webhooks.md, "Inbound events"; docs/quickstart.md step 5). */
export const SERVICE_EVENTS_PATH = '/v1/providers/runtime/webhook';
export const SERVICE_TOKEN_PATH = '/v1/auth/token';
/** The only scope an events token asks for: least privilege, whatever else the app may do. */
export const SERVICE_EVENTS_SCOPE = 'events:write';
/** The service keeps a caller's well-formed `req_` id as the request's id, so even a lost answer has one to quote. */
export const SERVICE_REQUEST_ID_HEADER = 'x-service-request-id';
/** Every send makes at most this many requests, token requests included. */
export const SERVICE_EVENTS_MAX_ATTEMPTS = 3;

const DEFAULT_TIMEOUT_MS = 10_000;
/** The service's event window is a minute, so its Retry-After stays within one; a longer wait is handed to the caller. */
const DEFAULT_MAX_RETRY_WAIT_SECONDS = 60;
/** Waits before the 2nd and 3rd attempt when the answer named none (a lost answer). */
const BACKOFF_MS = [500, 1000];
/** Statuses that say "not now" rather than "no": the service or a proxy in front of it was overloaded or down. */
const RETRIED_STATUSES = new Set([429, 502, 503, 504]);
/** 401s a new app token cures; `invalid_signature` is not one of them. */
const TOKEN_PROBLEMS = new Set(['invalid_token', 'token_expired']);

// --- the event, typed from the descriptor --------------------------------------

type ObjectOr<T> = unknown extends T ? Record<string, unknown> : T;

/** The name the service gives a capability: its own, else its mode's (the first unnamed one). */
type NameOf<C> = C extends { readonly name: infer N extends string } ? N : C extends { readonly type: infer T extends string } ? T : string;

/** An event type and the type of its `data`. */
export interface EventType<T extends string = string, D = Record<string, unknown>> {
  type: T;
  data: D;
}

type WebhookEventTypes<C> = C extends { readonly events: ReadonlyArray<infer E> }
  ? E extends { readonly type: infer T extends string; readonly schema: infer S }
    ? EventType<T, ObjectOr<FromSchema<S>>>
    : never
  : C extends { readonly schema: infer S }
    ? EventType<NameOf<C>, ObjectOr<FromSchema<S>>>
    : never;

/** A capability read from JSON (its mode unknown to the compiler) may push anything; an `as const` one only its events. */
type CapabilityEventTypes<C> = C extends { readonly type: infer M }
  ? [CapabilityMode] extends [M]
    ? EventType
    : M extends 'webhook'
      ? WebhookEventTypes<C>
      : never
  : never;

/**
 * The event types a descriptor's `webhook` capabilities register (`events`,
 * or the capability's own name and `schema` without them), each with its
 * `data` type from the schema when the descriptor is written `as const`.
 */
export type EventTypesOf<D extends PackageDescriptor> = CapabilityEventTypes<D['capabilities'][number]>;

/**
 * The body of `POST /v1/providers/runtime/webhook`, field for field: `event`
 * is a registered type, `action` a verb of at most 100 characters, `timestamp`
 * ISO 8601 within 5 minutes of the service's clock, `userId` the user's id
 * (`usr_…`, at most 64 characters), `data` an object matching the type's schema.
 */
export type ServiceEvent<E extends EventType = EventType> = E extends EventType
  ? { event: E['type']; action: string; timestamp: string; userId: string; data: E['data'] }
  : never;

/** What `send` takes: a `ServiceEvent` whose `timestamp` may be a Date, or left out for now. */
export type ServiceEventInput<E extends EventType = EventType> = E extends EventType
  ? { event: E['type']; action: string; timestamp?: string | Date; userId: string; data: E['data'] }
  : never;

/** The service's answer to an accepted event (202); a repeat of an event it kept answers the first one's id. */
export interface ServiceEventAck {
  status: 'accepted';
  event_id: string;
  processed_at: string;
}

// --- errors --------------------------------------------------------------------

/** One refused field, as the service's problem details name it (`event`, `data.startsAt`, …). */
export interface ServiceEventFieldError {
  field: string;
  message: string;
  code?: string;
}

interface ErrorDetails {
  type?: string | null;
  title?: string;
  fieldErrors?: ServiceEventFieldError[];
  requestId: string | null;
  retryAfterSeconds?: number | null;
  attempts: number;
  body?: unknown;
  cause?: unknown;
}

/**
 * An event the service did not accept, or a token it did not give, in the
 * service's own terms (RFC 9457 problem details): `status`, `code` (the
 * fragment of the problem `type`: `invalid_signature`, `invalid_format`,
 * `rate_limit_exceeded`, `invalid_client` …), `detail`, the refused fields,
 * and the request id to quote to support. Status 0 means no answer came:
 * `network_error` or `timeout`.
 */
export class ServiceEventError extends Error {
  readonly type: string | null;
  readonly title: string;
  readonly detail: string;
  /** The first refused field (`event`, `timestamp`, `data.startsAt`), or null. */
  readonly field: string | null;
  readonly fieldErrors: ServiceEventFieldError[];
  /** The answer's `X-Service-Request-Id`; without an answer, the id this request was sent with. */
  readonly requestId: string | null;
  /** The service's `Retry-After`, in seconds from when it answered. */
  readonly retryAfterSeconds: number | null;
  /** Which attempt of the send failed last (1 to 3). */
  readonly attempts: number;
  readonly body: unknown;

  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    details: ErrorDetails,
  ) {
    super(detail, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'ServiceEventError';
    this.type = details.type ?? null;
    this.title = details.title ?? code;
    this.detail = detail;
    this.fieldErrors = details.fieldErrors ?? [];
    this.field = this.fieldErrors[0]?.field ?? null;
    this.requestId = details.requestId;
    this.retryAfterSeconds = details.retryAfterSeconds ?? null;
    this.attempts = details.attempts;
    this.body = details.body ?? null;
  }

  /** A plain object for logs (an Error's own fields do not survive JSON.stringify). */
  toJSON(): Record<string, unknown> {
    return {
      status: this.status,
      code: this.code,
      type: this.type,
      title: this.title,
      detail: this.detail,
      field_errors: this.fieldErrors,
      request_id: this.requestId,
      retry_after_seconds: this.retryAfterSeconds,
      attempts: this.attempts,
    };
  }
}

type Json = Record<string, unknown>;

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** `Retry-After` as seconds from now: delta-seconds or an HTTP date; null when absent or unreadable. */
function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

function fieldErrorsOf(problem: Json, detail: string): ServiceEventFieldError[] {
  if (Array.isArray(problem.errors)) {
    return problem.errors
      .filter((item): item is Json => typeof item === 'object' && item !== null)
      .map((item) => ({
        field: text(item.field) ?? '',
        message: text(item.message) ?? detail,
        ...(text(item.code) ? { code: text(item.code) } : {}),
      }));
  }
  const field = text(problem.field);
  return field ? [{ field, message: detail }] : [];
}

/** The error of a non-2xx answer: problem details (with the OAuth `error` members the token endpoint adds), or whatever came. */
function answerError(answer: Answer, attempts: number): ServiceEventError {
  let body: unknown = answer.text;
  try {
    body = JSON.parse(answer.text);
  } catch {
    // Not JSON (a proxy's page): kept as text.
  }
  const context = {
    requestId: answer.requestId,
    retryAfterSeconds: retryAfterSeconds(answer.headers.get('retry-after')),
    attempts,
    body,
  };
  const fallback = `The service answered ${answer.status}`;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return new ServiceEventError(answer.status, String(answer.status), fallback, context);
  }
  const problem = body as Json;
  const type = text(problem.type) ?? null;
  const code = (type?.includes('#') ? type.slice(type.indexOf('#') + 1) : undefined) ?? text(problem.error) ?? String(answer.status);
  const detail = text(problem.detail) ?? text(problem.error_description) ?? text(problem.title) ?? fallback;
  return new ServiceEventError(answer.status, code, detail, {
    ...context,
    type,
    title: text(problem.title),
    fieldErrors: fieldErrorsOf(problem, detail),
  });
}

/** The 2xx answer's body; one that is not the service's acknowledgement (a proxy's page) is an error, not a success. */
function acknowledgement(answer: Answer, attempts: number): ServiceEventAck {
  try {
    const ack = JSON.parse(answer.text) as Partial<ServiceEventAck>;
    if (ack?.status === 'accepted' && typeof ack.event_id === 'string') return ack as ServiceEventAck;
  } catch {
    // Answered below.
  }
  throw new ServiceEventError(answer.status, 'invalid_answer', `The service answered ${answer.status} without an acknowledgement`, {
    requestId: answer.requestId,
    attempts,
    body: answer.text,
  });
}

// --- the client ----------------------------------------------------------------

export interface ServiceEventsOptions<D extends PackageDescriptor = PackageDescriptor> {
  /** The service's base URL, as the app's API calls use it (`https://api.example.com`). */
  serviceUrl: string;
  /** The app's OAuth client (shown when the app was registered). */
  clientId: string;
  clientSecret: string;
  /** The app's webhook signing secret (`whsec_…`): the one its deliveries are signed with. */
  signingSecret: string;
  /** Types `send` from the descriptor's webhook event types when written `as const`; the service is the judge of the events. */
  descriptor?: D;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** Per request (token or event); a request that takes longer counts as lost. Default 10 000. */
  timeoutMs?: number;
  /** A `Retry-After` longer than this is not waited for: the error is thrown at once with `retryAfterSeconds`. Default 60. */
  maxRetryWaitSeconds?: number;
}

/** An answer read to its end: a connection lost mid-body is a lost answer, like one lost before the status. */
interface Answer {
  status: number;
  headers: Headers;
  text: string;
  requestId: string | null;
}

interface CachedToken {
  value: string;
  /** When to ask for the next one: shortly before `expires_in` runs out. */
  refreshAt: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** RFC 6749 §2.3.1: the client id and secret are form-encoded before they are joined and base64 encoded. */
const formEncode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');

/**
 * Pushes a provider's events to the service (`POST /v1/providers/runtime/webhook`):
 * an app token from the client credentials grant (scope `events:write`),
 * reused until shortly before it expires and renewed once when the service
 * refuses it, and `X-Signature-256` over the exact bytes sent.
 *
 * Retries (at most 3 requests per send): 429 and 503 (also 502 and 504 from a
 * proxy) after their `Retry-After`, and lost answers (connection errors,
 * timeouts). Resending is safe because every attempt carries the same bytes
 * and the service keeps one event per app, event type, timestamp and body
 * hash: a repeat is acknowledged with the first event's id and not processed
 * again. Every other refusal is thrown at once as a `ServiceEventError`.
 */
export class ServiceEvents<D extends PackageDescriptor = PackageDescriptor> {
  private readonly baseUrl: string;
  private readonly fetchFn: typeof fetch;
  private readonly timeoutMs: number;
  private readonly maxRetryWaitSeconds: number;
  private token: CachedToken | null = null;
  /** One token request at a time, shared by concurrent sends. */
  private pendingToken: Promise<CachedToken> | null = null;

  constructor(private readonly options: ServiceEventsOptions<D>) {
    const url = new URL(options.serviceUrl); // throws on a malformed URL, here rather than at the first send
    this.baseUrl = url.href.replace(/\/+$/, '');
    for (const name of ['clientId', 'clientSecret'] as const) {
      if (typeof options[name] !== 'string' || options[name] === '') throw new TypeError(`ServiceEvents: ${name} is required`);
    }
    // Signs nothing, to refuse a malformed secret (whitespace, quotes, no whsec_) now, with the mistake named.
    signInboundWebhook(options.signingSecret, '');
    this.fetchFn = options.fetch ?? fetch;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetryWaitSeconds = options.maxRetryWaitSeconds ?? DEFAULT_MAX_RETRY_WAIT_SECONDS;
  }

  /** Sends one event and resolves with the service's acknowledgement, or rejects with a `ServiceEventError`. */
  async send(input: ServiceEventInput<EventTypesOf<D>>): Promise<ServiceEventAck> {
    const body = JSON.stringify(this.eventOf(input));
    // Signed once: every attempt sends these bytes, so the service recognises a resend as the same event.
    const signature = signInboundWebhook(this.options.signingSecret, body);
    let renewedToken = false;
    for (let attempt = 1; ; attempt += 1) {
      let failure: ServiceEventError;
      try {
        const token = await this.accessToken(attempt);
        const answer = await this.post(
          SERVICE_EVENTS_PATH,
          { authorization: `Bearer ${token}`, 'content-type': 'application/json', [INBOUND_SIGNATURE_HEADER]: signature },
          body,
          attempt,
        );
        if (answer.status >= 200 && answer.status < 300) return acknowledgement(answer, attempt);
        failure = answerError(answer, attempt);
        if (failure.status === 401 && !renewedToken && (TOKEN_PROBLEMS.has(failure.code) || failure.type === null)) {
          // Expired early (clock skew) or revoked: one new token, then the next attempt.
          renewedToken = true;
          this.forget(token);
          if (attempt < SERVICE_EVENTS_MAX_ATTEMPTS) continue;
        }
      } catch (error) {
        if (!(error instanceof ServiceEventError)) throw error;
        failure = error;
      }
      const wait = this.retryWait(failure, attempt);
      if (wait === null) throw failure;
      await sleep(wait);
    }
  }

  /** The wire form, fields in the documented order; the timestamp defaults to now. */
  private eventOf(input: ServiceEventInput): ServiceEvent {
    const { event, action, timestamp, userId, data } = input;
    const at = timestamp === undefined ? new Date() : timestamp;
    return { event, action, timestamp: at instanceof Date ? at.toISOString() : at, userId, data };
  }

  /** Milliseconds to wait before trying again, or null to give up with `failure`. */
  private retryWait(failure: ServiceEventError, attempt: number): number | null {
    if (attempt >= SERVICE_EVENTS_MAX_ATTEMPTS) return null;
    const backoff = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length) - 1];
    if (failure.status === 0) return backoff;
    if (!RETRIED_STATUSES.has(failure.status)) return null;
    if (failure.retryAfterSeconds === null) return backoff;
    return failure.retryAfterSeconds > this.maxRetryWaitSeconds ? null : failure.retryAfterSeconds * 1000;
  }

  private async accessToken(attempt: number): Promise<string> {
    if (this.token && Date.now() < this.token.refreshAt) return this.token.value;
    this.pendingToken ??= this.requestToken(attempt).finally(() => {
      this.pendingToken = null;
    });
    return (await this.pendingToken).value;
  }

  /** Drops the cached token if it is still the one the service refused (a concurrent send may have renewed it). */
  private forget(token: string): void {
    if (this.token?.value === token) this.token = null;
  }

  /** The client credentials grant with HTTP Basic, as docs/quickstart.md step 5 shows. */
  private async requestToken(attempt: number): Promise<CachedToken> {
    const basic = Buffer.from(`${formEncode(this.options.clientId)}:${formEncode(this.options.clientSecret)}`).toString('base64');
    const answer = await this.post(
      SERVICE_TOKEN_PATH,
      { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      new URLSearchParams({ grant_type: 'client_credentials', scope: SERVICE_EVENTS_SCOPE }).toString(),
      attempt,
    );
    if (answer.status !== 200) throw answerError(answer, attempt);
    let token: { access_token?: unknown; expires_in?: unknown } = {};
    try {
      token = JSON.parse(answer.text) as typeof token;
    } catch {
      // Refused below.
    }
    if (typeof token.access_token !== 'string' || token.access_token === '') {
      throw new ServiceEventError(200, 'invalid_token_response', 'The token endpoint answered without an access_token', {
        requestId: answer.requestId,
        attempts: attempt,
        body: answer.text,
      });
    }
    // The service's tokens live an hour; renew a minute early (half the lifetime for short-lived ones), never trusting an absent lifetime.
    const lifetime = typeof token.expires_in === 'number' && token.expires_in > 0 ? token.expires_in : 60;
    const margin = Math.min(60, lifetime / 2);
    this.token = { value: token.access_token, refreshAt: Date.now() + (lifetime - margin) * 1000 };
    return this.token;
  }

  /** One request, read to its end, with its own request id; no answer at all is a `ServiceEventError` with status 0. */
  private async post(path: string, headers: Record<string, string>, body: string, attempt: number): Promise<Answer> {
    const sentId = `req_${randomBytes(12).toString('hex')}`;
    try {
      const fetchFn = this.fetchFn; // called unbound: some fetch implementations refuse another `this`
      const response = await fetchFn(`${this.baseUrl}${path}`, {
        method: 'POST',
        headers: { ...headers, [SERVICE_REQUEST_ID_HEADER]: sentId },
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const text = await response.text();
      return {
        status: response.status,
        headers: response.headers,
        text,
        requestId: response.headers.get(SERVICE_REQUEST_ID_HEADER) ?? sentId,
      };
    } catch (cause) {
      // By name, not instanceof: the DOMException of an aborted fetch may come from another realm.
      const name = (cause as { name?: unknown } | null)?.name;
      const timedOut = name === 'TimeoutError' || name === 'AbortError';
      throw new ServiceEventError(
        0,
        timedOut ? 'timeout' : 'network_error',
        timedOut
          ? `No answer from ${this.baseUrl}${path} within ${this.timeoutMs} ms`
          : `${this.baseUrl}${path} could not be reached: ${String((cause as { message?: unknown } | null)?.message ?? cause)}`,
        { requestId: sentId, attempts: attempt, cause },
      );
    }
  }
}

/** `new ServiceEvents(options)`, with the descriptor's event types inferred from `options.descriptor`. */
export function createServiceEvents<D extends PackageDescriptor = PackageDescriptor>(options: ServiceEventsOptions<D>): ServiceEvents<D> {
  return new ServiceEvents(options);
}
