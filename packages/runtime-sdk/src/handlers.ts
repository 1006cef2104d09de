import type { CapabilityDescriptor, CapabilityMode, FromSchema, PackageDescriptor } from './descriptor';
import type { ActionAnswer, DegradedAnswer, HistoryAnswer, StateAnswer } from './envelopes';
import type { EventStream } from './sse';
import type { IncomingHeaders, VerifiedCall } from './verify';

/** What a handler knows about the call besides its params: verified, never taken from the body alone. */
export interface CallContext extends VerifiedCall {
  capability: string;
  mode: CapabilityMode;
  /** Language tag and IANA zone of the user (state and history; `en`/`UTC` unless the caller chose). */
  locale: string;
  timezone: string;
  /** The action's `X-Service-Idempotency-Key`. */
  idempotencyKey?: string;
  /** The confirmation the user gave for this action (`context.confirmationId`). */
  confirmationId?: string;
  headers: IncomingHeaders;
  /** The request body exactly as received. */
  rawBody: Buffer;
}

/** The paging params the service adds to every history call (docs/descriptor.md): always allowed. */
export interface PagingParams {
  limit?: number;
  cursor?: string;
  direction?: string;
}

type Awaitable<T> = T | Promise<T>;
type ObjectOr<T> = unknown extends T ? Record<string, unknown> : T;

export type ParamsOf<C> = C extends { readonly schema: infer S } ? ObjectOr<FromSchema<S>> : Record<string, unknown>;
export type ResultOf<C> = C extends { readonly responseSchema: infer S } ? ObjectOr<FromSchema<S>> : Record<string, unknown>;

/** A state handler answers `{ data }` (ttl defaults to `refreshInterval`) or a built envelope (`stateAnswer`, `degradedAnswer`). */
export type StateReturn<D> = StateAnswer<D> | DegradedAnswer<D> | { data: D; ttl?: number; source?: string; fetchedAt?: Date | string };
export type ActionReturn<R> = ActionAnswer<R> | DegradedAnswer | { result: R; message: string };
/** `next` null or absent: the last page. */
export type HistoryReturn<I> = HistoryAnswer<I> | DegradedAnswer | { items: I[]; next?: string | null; totalCount?: number };

export type StateHandler<P = Record<string, unknown>, D = Record<string, unknown>> = (
  params: P,
  context: CallContext,
) => Awaitable<StateReturn<D>>;
export type ActionHandler<I = Record<string, unknown>, R = Record<string, unknown>> = (
  input: I,
  context: CallContext,
) => Awaitable<ActionReturn<R>>;
export type HistoryHandler<P = Record<string, unknown>, I = Record<string, unknown>> = (
  params: P & PagingParams,
  context: CallContext,
) => Awaitable<HistoryReturn<I>>;
/**
 * Streams until the service disconnects (`stream.signal`) or the handler calls
 * `stream.close()`. Heartbeats are sent for it. `query` is the stream URL's
 * query string: the service itself sends no params to a stream.
 */
export type RealtimeHandler<D = Record<string, unknown>> = (
  stream: EventStream<D>,
  context: CallContext,
  query: Record<string, string>,
) => Awaitable<void>;

/** The handler of capability `C`, by its mode; for a descriptor that is not `as const` (mode unknown), any mode's. */
export type HandlerFor<C> = C extends { readonly type: infer T } ? ModeHandler<C, T> : never;

type ModeHandler<C, T> = T extends 'state'
  ? StateHandler<ParamsOf<C>, ResultOf<C>>
  : T extends 'action'
    ? ActionHandler<ParamsOf<C>, ResultOf<C>>
    : T extends 'history'
      ? HistoryHandler<ParamsOf<C>, ResultOf<C>>
      : T extends 'realtime'
        ? RealtimeHandler<ResultOf<C>>
        : never;

/** The capability's literal name; its mode when unnamed (the service's default); any string when the descriptor is not `as const`. */
type NameOf<C> = C extends { readonly name: infer N extends string }
  ? N
  : C extends { readonly name?: undefined; readonly type: infer T extends string }
    ? T
    : string;

/**
 * One handler per capability the service calls, keyed by capability name and
 * typed by its mode and schemas. Webhook capabilities have none: the service
 * never calls them (the provider pushes their events, see `ServiceEvents`).
 */
export type Handlers<D extends PackageDescriptor> = {
  [C in D['capabilities'][number] as C extends { readonly type: 'webhook' } ? never : NameOf<C>]: HandlerFor<C>;
};

export type AnyHandler = StateHandler | ActionHandler | HistoryHandler | RealtimeHandler;

/** Descriptor types a handler map can be checked against even when the descriptor is not `as const`. */
export type LooseDescriptor = PackageDescriptor & { capabilities: readonly CapabilityDescriptor[] };
