import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { failureFrom, type ApiClient, type Schemas } from '@soul-service/api-client';
import { signWebhook } from '@soul-service/webhooks';
import { UsageError, type Command, type CommandContext } from '../command';
import { configDir } from '../credentials';
import { errorDocument } from '../output';
import { VERSION } from '../version';
import { wait } from '../wait';
import { APP_OPTION, appId, httpUrlOption } from './shared';

type AppEvent = Schemas['AppEventDto'];
type EventType = NonNullable<AppEvent['type']>;

/**
 * How far back each poll reads again. Events are kept when they are dispatched, which can be a second or so out
 * of order (docs/events-api.md says to look back a minute); ids already forwarded are skipped.
 */
export const LISTEN_LOOKBACK_MS = 60_000;
/** Seconds a receiver has to answer, as the service gives an endpoint by default. */
const FORWARD_TIMEOUT_MS = 10_000;
const MAX_BACKOFF_MS = 30_000;
const SECRET_ENV = 'SOUL_WEBHOOK_SECRET';

/** What `listen` keeps between runs, per service and app: where it stands and what it has forwarded. */
export interface ListenState {
  /** The newest `created_at` forwarded (ms), or when listening began. */
  newest: number;
  /** Event ids forwarded, with their `created_at` (ms), for the look-back window. */
  forwarded: Record<string, number>;
}

/**
 * The listener's position. `next` answers the events of a poll not forwarded yet, oldest first; `forwarded`
 * records one once the receiver has answered it, so an event whose forwarding failed (the receiver down) is
 * offered again on the next poll and a restarted `listen` goes on from the state file.
 */
export class ListenCursor {
  constructor(readonly state: ListenState) {}

  since(): string {
    return new Date(this.state.newest - LISTEN_LOOKBACK_MS).toISOString();
  }

  next(events: AppEvent[]): AppEvent[] {
    return events
      .filter((e) => !(e.id in this.state.forwarded) && Date.parse(e.created_at) >= this.state.newest - LISTEN_LOOKBACK_MS)
      .sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at) || a.id.localeCompare(b.id));
  }

  /** Marks events as already handled without forwarding them (what existed when listening began). */
  skip(events: AppEvent[]): void {
    for (const e of events) this.forwarded(e);
  }

  forwarded(event: AppEvent): void {
    const at = Date.parse(event.created_at);
    this.state.forwarded[event.id] = at;
    if (at > this.state.newest) this.state.newest = at;
    const horizon = this.state.newest - 2 * LISTEN_LOOKBACK_MS;
    for (const [id, seen] of Object.entries(this.state.forwarded)) if (seen < horizon) delete this.state.forwarded[id];
  }
}

/** The state file of one service and app, written whole and renamed (a crash never leaves half a file). */
class StateFile {
  readonly path: string;

  constructor(env: Record<string, string | undefined>, baseUrl: string, app: string) {
    const key = createHash('sha256').update(`${baseUrl} ${app}`).digest('hex').slice(0, 16);
    this.path = join(configDir(env), 'listen', `${app}-${key}.json`);
  }

  read(): (ListenState & { secret?: string }) | null {
    try {
      const parsed = JSON.parse(readFileSync(this.path, 'utf8')) as ListenState & { secret?: string };
      return typeof parsed.newest === 'number' && parsed.forwarded && typeof parsed.forwarded === 'object' ? parsed : null;
    } catch {
      return null;
    }
  }

  write(state: ListenState, secret: string | undefined): void {
    mkdirSync(join(this.path, '..'), { recursive: true, mode: 0o700 });
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify({ ...state, ...(secret ? { secret } : {}) })}\n`, { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, this.path);
  }
}

/** The service's time, from the Date header of a one-event read (the local clock when a proxy drops the header). */
async function serviceClock(api: ApiClient, query: { app_id: string }): Promise<number> {
  const { error, response } = await api.GET('/v1/providers/events', { params: { query: { ...query, limit: 1 } } });
  if (!response.ok) throw failureFrom(response.status, error ?? null, response.headers, response.statusText);
  return Date.parse(response.headers.get('date') ?? '') || Date.now();
}

/** Every event since `since` matching the types (all pages, newest first as the API lists them). */
async function poll(api: ApiClient, query: { app_id: string; type?: EventType[] }, since: string): Promise<AppEvent[]> {
  const events: AppEvent[] = [];
  let cursor: string | undefined;
  const seen = new Set<string>();
  for (;;) {
    const { data, error, response } = await api.GET('/v1/providers/events', {
      params: { query: { ...query, limit: 100, since, ...(cursor ? { cursor } : {}) } },
    });
    if (!response.ok || !data) throw failureFrom(response.status, error ?? null, response.headers, response.statusText);
    events.push(...data.events);
    if (!data.next_cursor || seen.has(data.next_cursor)) return events;
    seen.add(data.next_cursor);
    cursor = data.next_cursor;
  }
}

function parseTypes(value: unknown): EventType[] | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  return value.split(',').map((t) => t.trim()) as EventType[];
}

export const listen: Command = {
  name: 'listen',
  summary: 'Forward the app’s webhook events to a local receiver, signed as in production; resumes where it stopped (Ctrl-C ends it)',
  options: {
    'forward-to': { type: 'string', value: '<url>', description: 'The local receiver, for example http://localhost:8787/webhooks' },
    app: APP_OPTION,
    'event-type': { type: 'string', value: '<type[,type]>', description: 'Only events of these types, comma-separated (default: all)' },
    interval: { type: 'string', value: '<seconds>', description: 'Seconds between polls of the events API (default 1)' },
    'print-secret': { type: 'boolean', description: 'Print only the signing secret the forwarded events carry, and exit' },
  },
  examples: [
    'soul listen --forward-to http://localhost:8787/webhooks',
    'SOUL_WEBHOOK_SECRET=$(soul listen --print-secret) npm start   # the receiver verifies with the listener’s secret',
  ],
  async run(context: CommandContext) {
    const api = context.api();
    const app = await appId(context);
    const file = new StateFile(context.io.env, context.baseUrl, app);
    const saved = file.read();
    // The receiver's secret: the one it already has (SOUL_WEBHOOK_SECRET), else the listener's own, made once per app.
    const given = context.io.env[SECRET_ENV];
    const ownSecret = saved?.secret ?? `whsec_${randomBytes(32).toString('base64')}`;
    const secret = given || ownSecret;
    if (context.options['print-secret']) {
      if (!saved) file.write({ newest: 0, forwarded: {} }, ownSecret);
      context.io.stdout.write(`${secret}\n`);
      return;
    }
    const target = httpUrlOption(context.options['forward-to'], '--forward-to', 'http://localhost:8787/webhooks');
    const types = parseTypes(context.options['event-type']);
    const seconds = context.options.interval === undefined ? 1 : Number(context.options.interval);
    if (!Number.isFinite(seconds) || seconds < 0.2 || seconds > 60) throw new UsageError('--interval is seconds between polls, 0.2 to 60');
    const query = { app_id: app, ...(types ? { type: types } : {}) };
    const { signal } = context.io;

    let cursor: ListenCursor;
    if (saved && saved.newest > 0) {
      cursor = new ListenCursor({ newest: saved.newest, forwarded: saved.forwarded });
      context.out.note(`Resuming from ${new Date(saved.newest).toISOString()}: events since then are forwarded, none twice.`);
    } else {
      // A first run starts now (as `tail -n 0 -f`): what the service already holds is not replayed. "Now" is the
      // service's clock (its Date header), so a skewed local clock can neither replay old events nor skip new ones.
      cursor = new ListenCursor({ newest: await serviceClock(api, query), forwarded: {} });
      cursor.skip(await poll(api, query, cursor.since()));
    }
    file.write(cursor.state, ownSecret);
    context.out.item(
      { ready: true, app_id: app, forward_to: target, secret: given ? undefined : secret, secret_source: given ? SECRET_ENV : 'listener' },
      given
        ? `Ready: forwarding ${app}'s events to ${target}, signed with $${SECRET_ENV}. Ctrl-C to stop.`
        : `Ready: forwarding ${app}'s events to ${target}. Your receiver's signing secret is ${secret} (or set ${SECRET_ENV}). Ctrl-C to stop.`,
    );

    let backoff = seconds * 1000;
    while (!signal.aborted) {
      let events: AppEvent[];
      try {
        events = cursor.next(await poll(api, query, cursor.since()));
        backoff = seconds * 1000;
      } catch (error) {
        // The service unreachable or refusing for a while: keep the position and try again, slower.
        const document = errorDocument(error);
        context.out.note(`Cannot read events (${document.detail}); retrying in ${Math.round(backoff / 1000)} s.`);
        await wait(backoff, signal);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        continue;
      }
      for (const event of events) {
        if (signal.aborted) break;
        const body = JSON.stringify(event);
        const started = performance.now();
        let status: number;
        try {
          const response = await fetch(target, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'user-agent': `soul-cli-listen/${VERSION}`,
              ...signWebhook({ secret, payload: body, id: event.id }),
            },
            body,
            redirect: 'manual',
            signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
          });
          status = response.status;
          await response.arrayBuffer();
        } catch (error) {
          // Not answered (nothing listening, timed out): this event and the later ones wait for the next poll, in order.
          context.out.note(
            `${target} did not answer (${(error as Error).cause ? String(((error as Error).cause as Error).message) : (error as Error).message}); ${event.id} is forwarded again on the next poll.`,
          );
          break;
        }
        cursor.forwarded(event);
        file.write(cursor.state, ownSecret);
        const durationMs = Math.round(performance.now() - started);
        context.out.item(
          { event_id: event.id, type: event.type, created_at: event.created_at, status, duration_ms: durationMs },
          `${event.created_at}  ${event.type.padEnd(20)} ${event.id}  → ${status} (${durationMs} ms)`,
        );
      }
      await wait(seconds * 1000, signal);
    }
  },
};
