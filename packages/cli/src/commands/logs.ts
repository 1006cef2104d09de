import { ok, paginate, type ApiClient, type Schemas } from '@soul-service/api-client';
import { UsageError, type Command, type CommandContext } from '../command';
import { APP_OPTION, appId, PACKAGE_OPTION } from './shared';
import { wait } from '../wait';

type Execution = Schemas['ExecutionSummaryDto'];
type Delivery = Schemas['DeliverySummaryDto'];

const OUTCOMES: ReadonlyArray<Execution['outcome']> = ['ok', 'degraded', 'cached', 'pending', 'failed'];
const DELIVERY_STATUSES: ReadonlyArray<Delivery['status']> = ['pending', 'delivered', 'failed'];

/**
 * How far back each poll looks again. A row's `created_at` is its transaction's start, so a call that started
 * earlier can become visible after a later one was shown; re-reading this window (and skipping ids already
 * shown) lets it through instead of losing it.
 */
export const LOOKBACK_MS = 15_000;

export interface TailFilters {
  package_id?: string;
  capability?: string;
  install_id?: string;
  outcome?: Execution['outcome'];
  app_id?: string;
}

/**
 * The tail's memory: the executions shown, by request id, and the newest time seen. `take` answers the page's
 * executions not shown before, oldest first, and forgets ids older than the window so memory stays bounded.
 */
export class TailCursor {
  private readonly shown = new Map<string, number>();
  private newest: number | null = null;

  /** `since` of the next poll: the window before the newest execution shown (none before the first). */
  since(): string | undefined {
    return this.newest === null ? undefined : new Date(this.newest - LOOKBACK_MS).toISOString();
  }

  /** Marks executions as already shown without showing them (what existed when the tail started). */
  skip(executions: Execution[]): void {
    this.take(executions);
  }

  take(executions: Execution[]): Execution[] {
    const fresh = executions
      .filter((e) => !this.shown.has(e.request_id))
      .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || a.request_id.localeCompare(b.request_id));
    for (const e of fresh) {
      const at = Date.parse(e.created_at);
      this.shown.set(e.request_id, at);
      if (this.newest === null || at > this.newest) this.newest = at;
    }
    if (this.newest !== null) {
      const horizon = this.newest - 2 * LOOKBACK_MS;
      for (const [id, at] of this.shown) if (at < horizon) this.shown.delete(id);
    }
    return fresh;
  }
}

function option(context: CommandContext, name: string): string | undefined {
  const value = context.options[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Options that filter one log only: given with the other log they would silently filter nothing. */
function refuseOptions(context: CommandContext, names: string[], why: string): void {
  for (const name of names) if (option(context, name) !== undefined) throw new UsageError(`--${name} ${why}`);
}

function filtersFrom(context: CommandContext): TailFilters {
  refuseOptions(context, ['event-type', 'endpoint'], 'filters webhook deliveries: add --deliveries.');
  const outcome = option(context, 'status') as Execution['outcome'] | undefined;
  if (outcome !== undefined && !OUTCOMES.includes(outcome)) {
    throw new UsageError(`--status must be one of ${OUTCOMES.join(', ')}, not ${JSON.stringify(outcome)}`);
  }
  const filters: TailFilters = {
    package_id: option(context, 'package') ?? context.io.env.SOUL_PACKAGE_ID,
    capability: option(context, 'capability'),
    install_id: option(context, 'install'),
    outcome,
    app_id: option(context, 'app'),
  };
  return Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined && v !== ''));
}

function intervalFrom(context: CommandContext): number {
  const given = context.options.interval;
  if (given === undefined) return 2_000;
  const seconds = Number(given);
  if (!Number.isFinite(seconds) || seconds < 0.2 || seconds > 300) throw new UsageError('--interval is seconds between polls, 0.2 to 300');
  return Math.round(seconds * 1000);
}

/** Every execution matching the filters since `since` (all pages, newest first as the API lists them). */
async function poll(api: ApiClient, filters: TailFilters, since: string | undefined): Promise<Execution[]> {
  const all: Execution[] = [];
  const query = { ...filters, limit: 100, ...(since ? { since } : {}) };
  const pages = (cursor: string | undefined) =>
    ok(api.GET('/v1/providers/executions', { params: { query: { ...query, ...(cursor ? { cursor } : {}) } } }));
  for await (const e of paginate(pages, (page) => page.executions)) {
    all.push(e);
  }
  return all;
}

function line(e: Execution): string {
  return [
    e.created_at,
    e.outcome.toUpperCase().padEnd(8),
    `${e.capability} (${e.mode})`.padEnd(28),
    `${e.duration_ms} ms`.padStart(8),
    `attempts ${e.attempts}`,
    e.install_id,
    e.request_id,
    e.error_code ? `error ${e.error_code}` : '',
  ]
    .join('  ')
    .trimEnd();
}

export const logsTail: Command = {
  name: 'logs tail',
  summary: 'Follow the execution log (with --deliveries, the webhook delivery log) as it happens (Ctrl-C ends it)',
  options: {
    deliveries: { type: 'boolean', description: 'Follow the app’s webhook deliveries instead of executions' },
    package: { ...PACKAGE_OPTION, description: 'Only calls of this package (default $SOUL_PACKAGE_ID); with --deliveries, only given' },
    capability: { type: 'string', value: '<name>', description: 'Only calls of this capability' },
    install: { type: 'string', value: '<inst_id>', description: 'Only calls for this install' },
    status: {
      type: 'string',
      value: '<status>',
      description: `Only calls with this outcome: ${OUTCOMES.join(', ')}; deliveries with this status: ${DELIVERY_STATUSES.join(', ')}`,
    },
    'event-type': { type: 'string', value: '<type>', description: 'With --deliveries: only events of this type (install.created, …)' },
    endpoint: {
      type: 'string',
      value: '<whe_id>',
      description: 'With --deliveries: this endpoint’s log (default: the primary endpoint’s)',
    },
    app: { ...APP_OPTION, description: 'Only calls of this app (a console token sees every app of the developer); the deliveries’ app' },
    interval: { type: 'string', value: '<seconds>', description: 'Seconds between polls (default 2)' },
  },
  examples: [
    'soul logs tail --package pkg_123 --status failed',
    'soul logs tail --capability balance --json | jq .request_id',
    'soul logs tail --deliveries --status failed --event-type install.created',
  ],
  async run(context) {
    if (context.options.deliveries === true) return tailDeliveries(context);
    const filters = filtersFrom(context);
    const interval = intervalFrom(context);
    const api = context.api();
    const { signal } = context.io;
    const cursor = new TailCursor();
    // What is in the log already is not shown (as `tail -n 0 -f`): the newest call, and every call in the window
    // before it that the polls look back over.
    const newest = await ok(api.GET('/v1/providers/executions', { params: { query: { ...filters, limit: 1 } } }));
    cursor.skip(newest.executions);
    if (newest.executions.length > 0) cursor.skip(await poll(api, filters, cursor.since()));
    context.out.note(`Following executions on ${context.baseUrl}${describeFilters(filters)}. Ctrl-C to stop.`);
    while (!signal.aborted) {
      // Times come from the service only (`since` is derived from rows it answered), so the local clock cannot skew the window.
      const fresh = cursor.take(await poll(api, filters, cursor.since()));
      for (const e of fresh) context.out.item(e, line(e));
      await wait(interval, signal);
    }
  },
};

function describeFilters(filters: TailFilters): string {
  const parts = Object.entries(filters).map(([k, v]) => `${k}=${String(v)}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/**
 * How long after it was created a pending delivery is read again for its next state: its first attempt and the
 * first two retries (5 s and about 5 minutes later with the default WEBHOOK_RETRY_BASE_MS). Later retries (30 min,
 * 2 h, 5 h) fall outside the tail; the delivery log has them.
 */
export const FOLLOW_PENDING_MS = 10 * 60_000;

/** A delivery's state at one moment: each change (an attempt made, the chain settled) is a new line of the tail. */
const stateOf = (d: Delivery) => `${d.status}#${d.attempt_count}`;

/**
 * The deliveries tail's memory. A delivery row changes after it is created (pending, attempts, then delivered
 * or failed), so it is remembered with its state, and `take` answers the deliveries that are new or changed
 * since last shown, oldest first. `since` looks back the execution tail's window, and further for deliveries
 * still pending (for at most FOLLOW_PENDING_MS), so their outcome is seen even when newer deliveries moved on.
 */
export class DeliveryCursor {
  private readonly seen = new Map<string, { state: string; at: number; pending: boolean }>();
  private newest: number | null = null;

  since(): string | undefined {
    if (this.newest === null) return undefined;
    const floor = this.newest - FOLLOW_PENDING_MS;
    let from = this.newest - LOOKBACK_MS;
    for (const d of this.seen.values()) if (d.pending && d.at >= floor && d.at < from) from = d.at;
    return new Date(from).toISOString();
  }

  /** Remembers deliveries as they are without showing them (the log when the tail starts); their later changes are shown. */
  skip(deliveries: Delivery[]): void {
    this.take(deliveries);
  }

  take(deliveries: Delivery[]): Delivery[] {
    const changed = deliveries
      .filter((d) => this.seen.get(d.id)?.state !== stateOf(d))
      .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || a.id.localeCompare(b.id));
    for (const d of changed) {
      const at = Date.parse(d.created_at);
      this.seen.set(d.id, { state: stateOf(d), at, pending: d.status === 'pending' });
      if (this.newest === null || at > this.newest) this.newest = at;
    }
    if (this.newest !== null) {
      // `since` never reaches back past the follow window: what is older cannot be read again.
      const horizon = this.newest - FOLLOW_PENDING_MS - LOOKBACK_MS;
      for (const [id, d] of this.seen) if (d.at < horizon) this.seen.delete(id);
    }
    return changed;
  }
}

export interface DeliveryFilters {
  app_id: string;
  /** The endpoint whose log is read; absent: the primary endpoint's (the webhook profile's). */
  endpoint_id?: string;
  event_type?: string;
  package_id?: string;
  /** Applied here, not by the API: a delivery must be followed while pending to be seen when it fails. */
  status?: Delivery['status'];
}

async function deliveryFiltersFrom(context: CommandContext): Promise<DeliveryFilters> {
  refuseOptions(context, ['capability', 'install'], 'filters executions, not webhook deliveries.');
  const status = option(context, 'status') as Delivery['status'] | undefined;
  if (status !== undefined && !DELIVERY_STATUSES.includes(status)) {
    throw new UsageError(`--status of deliveries must be one of ${DELIVERY_STATUSES.join(', ')}, not ${JSON.stringify(status)}`);
  }
  const endpoint = option(context, 'endpoint');
  if (endpoint !== undefined && !/^whe_\w+$/.test(endpoint))
    throw new UsageError(`--endpoint ${JSON.stringify(endpoint)} is not an endpoint id (whe_…)`);
  const filters: DeliveryFilters = {
    app_id: await appId(context),
    endpoint_id: endpoint,
    event_type: option(context, 'event-type'),
    // Only when given: test events and pings concern no package, and a job's SOUL_PACKAGE_ID would hide them.
    package_id: option(context, 'package'),
    status,
  };
  return Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined)) as unknown as DeliveryFilters;
}

/** Every delivery of the log matching the filters (status aside) created since `since`, all pages. */
async function pollDeliveries(api: ApiClient, filters: DeliveryFilters, since: string | undefined, limit = 200): Promise<Delivery[]> {
  const { app_id, endpoint_id, event_type, package_id } = filters;
  const query = (cursor: string | undefined) => ({
    limit,
    ...(event_type ? { event_type } : {}),
    ...(package_id ? { package_id } : {}),
    ...(since ? { since } : {}),
    ...(cursor ? { cursor } : {}),
  });
  const pages = (cursor: string | undefined) =>
    endpoint_id
      ? ok(
          api.GET('/v1/providers/apps/{app_id}/webhook/endpoints/{endpoint_id}/deliveries', {
            params: { path: { app_id, endpoint_id }, query: query(cursor) },
          }),
        )
      : ok(api.GET('/v1/providers/apps/{app_id}/webhook/deliveries', { params: { path: { app_id }, query: query(cursor) } }));
  const all: Delivery[] = [];
  if (limit === 1) return (await pages(undefined)).deliveries;
  for await (const d of paginate(pages, (page) => page.deliveries)) all.push(d);
  return all;
}

function deliveryLine(d: Delivery): string {
  const attempts = d.attempt_count === 1 ? '1 attempt' : `${d.attempt_count} attempts`;
  return [
    d.created_at,
    d.status.toUpperCase().padEnd(9),
    d.event_type.padEnd(22),
    attempts.padEnd(10),
    d.last_status_code !== null ? `HTTP ${d.last_status_code}` : '',
    d.id,
    d.endpoint_id,
    d.test ? 'test' : '',
    d.replay_of ? `replay of ${d.replay_of}` : '',
    d.status === 'pending' && d.next_attempt_at ? `next attempt ${d.next_attempt_at}` : '',
    d.last_error ? `error ${d.last_error}` : '',
  ]
    .filter((part) => part !== '')
    .join('  ');
}

/** `logs tail --deliveries`: the execution tail's polling, look-back and dedupe, over the webhook delivery log. */
async function tailDeliveries(context: CommandContext): Promise<void> {
  const filters = await deliveryFiltersFrom(context);
  const interval = intervalFrom(context);
  const api = context.api();
  const { signal } = context.io;
  const cursor = new DeliveryCursor();
  const newest = await pollDeliveries(api, filters, undefined, 1);
  cursor.skip(newest);
  if (newest.length > 0) cursor.skip(await pollDeliveries(api, filters, cursor.since()));
  const { app_id, ...shown } = filters;
  context.out.note(`Following webhook deliveries of ${app_id} on ${context.baseUrl}${describeFilters(shown)}. Ctrl-C to stop.`);
  while (!signal.aborted) {
    const changed = cursor.take(await pollDeliveries(api, filters, cursor.since()));
    for (const d of changed) if (!filters.status || d.status === filters.status) context.out.item(d, deliveryLine(d));
    await wait(interval, signal);
  }
}
