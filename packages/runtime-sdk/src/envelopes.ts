/**
 * The success envelopes the service accepts, one per mode (spec: "Provider
 * runtime contract", success responses; conformance's `envelopeProblems`),
 * and the degraded answer (partial data, passed on with `degraded: true`).
 * Handlers may return the short shapes (`{ data }`, `{ result, message }`,
 * `{ items, next }`); the SDK completes them with these builders.
 */
export interface StateAnswer<D = Record<string, unknown>> {
  status: 'ok';
  data: D;
  /** Seconds the service may serve this answer from its cache. */
  ttl: number;
  metadata: { source: string; fetchedAt: string; [other: string]: unknown };
}

export interface ActionAnswer<R = Record<string, unknown>> {
  status: 'ok';
  result: R;
  /** Shown to the user: what happened, in a sentence. */
  message: string;
}

export interface HistoryAnswer<I = Record<string, unknown>> {
  status: 'ok';
  items: I[];
  cursor: { next: string | null; hasMore: boolean };
  totalCount: number;
}

/** A part of the answer could not be fetched: the spec's `status: degraded` with an error `{ type, detail, retryable }`. */
export interface DegradedAnswer<D = Record<string, unknown>> {
  status: 'degraded';
  error: { type: string; detail: string; retryable: boolean };
  data?: Partial<D>;
  result?: Record<string, unknown>;
  items?: unknown[];
  cursor?: { next: string | null; hasMore: boolean };
  ttl?: number;
  metadata?: { source: string; fetchedAt: string };
  totalCount?: number;
}

const iso = (at: Date | string | undefined): string => (at === undefined ? new Date() : new Date(at)).toISOString();

export function stateAnswer<D>(data: D, options: { ttl: number; source: string; fetchedAt?: Date | string }): StateAnswer<D> {
  if (!Number.isInteger(options.ttl) || options.ttl < 0) throw new TypeError(`ttl must be a non-negative integer, got ${options.ttl}`);
  if (options.source === '') throw new TypeError('metadata.source must not be empty');
  return { status: 'ok', data, ttl: options.ttl, metadata: { source: options.source, fetchedAt: iso(options.fetchedAt) } };
}

export function actionAnswer<R>(result: R, message: string): ActionAnswer<R> {
  if (message.trim() === '') throw new TypeError('an action answer needs a human-readable message');
  return { status: 'ok', result, message };
}

/** `next` null (or absent) ends the list: `hasMore` follows from it, so the two can never disagree. */
export function historyAnswer<I>(items: I[], options: { next?: string | null; totalCount?: number } = {}): HistoryAnswer<I> {
  const next = options.next ?? null;
  if (next === '') throw new TypeError('cursor.next must be null or a non-empty string');
  const totalCount = options.totalCount ?? items.length;
  if (!Number.isInteger(totalCount) || totalCount < 0) throw new TypeError(`totalCount must be a non-negative integer, got ${totalCount}`);
  return { status: 'ok', items, cursor: { next, hasMore: next !== null }, totalCount };
}

/**
 * A partial answer: the service passes it on marked `degraded: true`, without
 * the strict schema check. `body` carries the mode's fields you do have
 * (`{ data, ttl, metadata }` for state, `{ items, cursor }` for history).
 */
export function degradedAnswer<D>(
  error: { type: string; detail: string; retryable?: boolean },
  body: Omit<DegradedAnswer<D>, 'status' | 'error'> = {},
): DegradedAnswer<D> {
  return { ...body, status: 'degraded', error: { type: error.type, detail: error.detail, retryable: error.retryable ?? true } };
}
