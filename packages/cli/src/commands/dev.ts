import { ApiFailure, failureFrom } from '@soul-service/api-client';
import { describeFailure } from '@soul-service/rules';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Command, CommandContext } from '../command';
import { VERSION } from '../version';
import { wait } from '../wait';
import { APP_OPTION, appId, httpUrlOption } from './shared';

/** The longest any tier lets a runtime take, and the largest answer any tier accepts (docs/runtime-bridge.md, "Limits"). */
const CALL_TIMEOUT_MS = 30_000;
const MAX_BYTES = 5 * 1024 * 1024;
/** Reconnecting: 1 s, doubling to 30 s, back to 1 s once the service has said `ready`. */
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;
/** The service answers the session's headers at once and pings every 15 s: silence this long is a dead connection. */
const HEADERS_TIMEOUT_MS = 30_000;
const IDLE_TIMEOUT_MS = 45_000;
/** How long posting an answer may take; shorter once Ctrl-C was pressed, so stopping stays quick. */
const POST_TIMEOUT_MS = 30_000;
const POST_TIMEOUT_STOPPING_MS = 5_000;
const USER_AGENT = `soul-cli/${VERSION} node/${process.versions.node}`;
/**
 * Connection-level headers (RFC 9110, 7.6.1) and the ones fetch sets itself: they describe the service's hop, not
 * the call, and Node's fetch refuses some of them outright.
 */
const HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'host',
  'content-length',
]);

/** One call the service routes to this machine (`event: call`). */
interface DevCall {
  call_id: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** What is posted back for a call: the runtime's answer, or why there is none. */
type CallOutcome =
  { status: number; headers: Record<string, string>; body: string } | { failure: 'unreachable' | 'timeout'; detail: string };

/** The session's `event: ready`. */
interface Ready {
  session_id: string;
  app_id: string;
  user_id: string | null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A call event's data, or a sentence saying what is wrong with it. */
function callFrom(data: string): DevCall | { problem: string; call_id?: string } {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return { problem: 'its data is not JSON' };
  }
  if (!isObject(value) || typeof value.call_id !== 'string' || value.call_id === '') return { problem: 'it has no call_id' };
  const { call_id, method, path, headers, body } = value;
  const invalid = (what: string) => ({ problem: `${call_id}: ${what}`, call_id });
  if (typeof method !== 'string' || !/^[A-Z]+$/.test(method)) return invalid('method is not an HTTP method');
  // A path that does not start with "/" could change the host it is appended to (`@elsewhere`).
  if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//')) return invalid('path does not start with one "/"');
  if (!isObject(headers) || !Object.values(headers).every((v) => typeof v === 'string')) return invalid('headers are not strings');
  if (typeof body !== 'string') return invalid('body is not a string');
  return { call_id, method, path, headers: headers as Record<string, string>, body };
}

/** The answer's text, at most MAX_BYTES + 1 bytes: one past the cap, so the service still sees it is too large. */
async function cappedText(response: Response): Promise<string> {
  const reader = response.body?.getReader() as ReadableStreamDefaultReader<Uint8Array> | undefined;
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  while (reader) {
    const chunk = await reader.read();
    if (chunk.done) break;
    const room = MAX_BYTES + 1 - bytes;
    chunks.push(chunk.value.byteLength > room ? chunk.value.subarray(0, room) : chunk.value);
    bytes += Math.min(chunk.value.byteLength, room);
    if (bytes > MAX_BYTES) {
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Sends the call to the runtime as the service would have: its method, headers and body, no redirects, 30 s in all. */
async function callRuntime(runtimeUrl: string, call: DevCall, stop: AbortSignal): Promise<CallOutcome> {
  const url = `${runtimeUrl}${call.path}`;
  const timeout = AbortSignal.timeout(CALL_TIMEOUT_MS);
  const headers = Object.fromEntries(Object.entries(call.headers).filter(([name]) => !HOP_HEADERS.has(name.toLowerCase())));
  try {
    const response = await fetch(url, {
      method: call.method,
      headers,
      body: call.method === 'GET' || call.method === 'HEAD' ? undefined : call.body,
      redirect: 'manual',
      signal: AbortSignal.any([timeout, stop]),
    });
    const body = await cappedText(response);
    const kept: Record<string, string> = {};
    for (const name of ['content-type', 'retry-after']) {
      const value = response.headers.get(name);
      if (value !== null) kept[name] = value;
    }
    return { status: response.status, headers: kept, body };
  } catch (error) {
    if (stop.aborted) return { failure: 'unreachable', detail: 'soul dev was stopped before the local runtime answered' };
    if (timeout.aborted) {
      return { failure: 'timeout', detail: `no complete answer from ${new URL(url).host} within ${CALL_TIMEOUT_MS / 1000} s` };
    }
    return { failure: 'unreachable', detail: describeFailure(error, url, CALL_TIMEOUT_MS).detail.replace(/^runtime_unavailable: /, '') };
  }
}

/** Why a connection or a request to the service failed, in a few words. */
function reasonOf(error: unknown): string {
  if (error instanceof ApiFailure) {
    return error.code === String(error.status) ? `${error.status}: ${error.message}` : `${error.status} ${error.code}: ${error.message}`;
  }
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (cause && typeof cause.code === 'string') return `${cause.code}${typeof cause.message === 'string' ? `: ${cause.message}` : ''}`;
  return error instanceof Error ? error.message : String(error);
}

/** A refusal that asking again will not change (a bad or expired token, an app the token may not use): not retried. */
function isFatal(error: unknown): error is ApiFailure {
  return error instanceof ApiFailure && error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429;
}

/** The `ready` event's data; one that is not a session ends the connection (the next one may be). */
function readyFrom(data: string): Ready {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    throw new Error('the ready event is not JSON');
  }
  if (!isObject(value) || typeof value.session_id !== 'string' || typeof value.app_id !== 'string') {
    throw new Error('the ready event names no session');
  }
  return { session_id: value.session_id, app_id: value.app_id, user_id: typeof value.user_id === 'string' ? value.user_id : null };
}

/** The service's problem document for a refused request (RFC 9457), as an ApiFailure naming code, detail and request id. */
async function refusal(response: Response): Promise<ApiFailure> {
  const text = await response.text().catch(() => '');
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's page): the status text stands for it.
  }
  return failureFrom(response.status, body, response.headers, response.statusText);
}

interface Session {
  context: CommandContext;
  token: string;
  app: string;
  runtimeUrl: string;
  onReady(ready: Ready): void;
  onCall(data: string): void;
}

/** Why the service ended a stream (`event: end`): the problem a new request with the same credential would get. */
function endedBecause(data: string): string {
  try {
    const { code, detail } = JSON.parse(data) as { code?: unknown; detail?: unknown };
    if (typeof code === 'string') return `the service ended the session: ${code}${typeof detail === 'string' ? ` (${detail})` : ''}`;
  } catch {
    // Not JSON: said as it is below.
  }
  return 'the service ended the session';
}

/**
 * One connection to the service's dev session: resolves when the service ends the stream (or Ctrl-C), with the
 * reason it gave if any, and throws what else ended it. Events are handed over as they arrive; a call never
 * holds up the stream.
 */
async function connect(session: Session): Promise<string | undefined> {
  const { context, token, app } = session;
  const controller = new AbortController();
  const stop = () => controller.abort();
  context.io.signal.addEventListener('abort', stop, { once: true });
  let silence: string | null = null;
  const giveUp = (why: string) => {
    silence = why;
    controller.abort();
  };
  let timer = setTimeout(() => giveUp(`no answer within ${HEADERS_TIMEOUT_MS / 1000} s`), HEADERS_TIMEOUT_MS);
  try {
    const url = `${context.baseUrl}/v1/providers/dev/session?app_id=${encodeURIComponent(app)}`;
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', 'user-agent': USER_AGENT },
      signal: controller.signal,
    });
    if (!response.ok) throw await refusal(response);
    const contentType = response.headers.get('content-type') ?? '';
    if (!/^text\/event-stream/i.test(contentType) || !response.body) {
      await response.body?.cancel().catch(() => undefined);
      throw new Error(`the service answered ${response.status} ${contentType || 'without a content type'}, not an event stream`);
    }
    clearTimeout(timer);
    timer = setTimeout(() => giveUp(`no event or ping for ${IDLE_TIMEOUT_MS / 1000} s`), IDLE_TIMEOUT_MS);
    // The parser reports events through a callback; they are handled after each chunk, where a bad one can end the loop.
    const events: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (message) => events.push(message) });
    const reader = response.body.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    const decoder = new TextDecoder();
    let ended: string | undefined;
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) return ended;
        timer.refresh();
        parser.feed(decoder.decode(chunk.value, { stream: true }));
        for (const message of events.splice(0)) {
          if (message.event === 'call') session.onCall(message.data);
          if (message.event === 'ready') session.onReady(readyFrom(message.data));
          if (message.event === 'end') ended = endedBecause(message.data);
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  } catch (error) {
    if (context.io.signal.aborted) return undefined;
    if (silence) throw new Error(silence);
    throw error;
  } finally {
    clearTimeout(timer);
    controller.abort();
    context.io.signal.removeEventListener('abort', stop);
  }
}

/** Posts the runtime's answer (or the failure) for a call; answers why it could not, or null once posted. */
async function postOutcome(context: CommandContext, token: string, callId: string, outcome: CallOutcome): Promise<string | null> {
  const url = `${context.baseUrl}/v1/providers/dev/session/calls/${encodeURIComponent(callId)}`;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'user-agent': USER_AGENT },
      // The service keeps a failure's detail to 1,000 characters.
      body: JSON.stringify('failure' in outcome ? { ...outcome, detail: outcome.detail.slice(0, 1000) } : outcome),
      signal: AbortSignal.timeout(context.io.signal.aborted ? POST_TIMEOUT_STOPPING_MS : POST_TIMEOUT_MS),
    });
    if (!response.ok) return reasonOf(await refusal(response));
    await response.body?.cancel().catch(() => undefined);
    return null;
  } catch (error) {
    return reasonOf(error);
  }
}

/** One call, from the stream to the runtime and the answer back to the service; never throws. */
async function serve(context: CommandContext, token: string, runtimeUrl: string, data: string): Promise<void> {
  const call = callFrom(data);
  if ('problem' in call) {
    context.out.note(`Ignored a call the CLI cannot read: ${call.problem}.`);
    // One it can name is answered, so the service need not wait for its own timeout.
    if (call.call_id) {
      await postOutcome(context, token, call.call_id, {
        failure: 'unreachable',
        detail: `soul dev could not read the call: ${call.problem}`,
      });
    }
    return;
  }
  const started = performance.now();
  const outcome = await callRuntime(runtimeUrl, call, context.io.signal);
  const durationMs = Math.round(performance.now() - started);
  const notPosted = await postOutcome(context, token, call.call_id, outcome);
  const result = 'failure' in outcome ? { failure: outcome.failure, detail: outcome.detail } : { status: outcome.status };
  context.out.item(
    { call_id: call.call_id, path: call.path, ...result, duration_ms: durationMs, ...(notPosted ? { post_error: notPosted } : {}) },
    [
      new Date().toISOString(),
      `${call.method} ${call.path}`.padEnd(40),
      call.call_id,
      `→ ${'failure' in outcome ? `${outcome.failure} (${outcome.detail})` : outcome.status} in ${durationMs} ms`,
      notPosted ? `answer not delivered to the service: ${notPosted}` : '',
    ]
      .filter((part) => part !== '')
      .join('  '),
  );
}

export const dev: Command = {
  name: 'dev',
  summary:
    'Serve the service’s real calls for your own test installs from a runtime on this machine, through a connection the CLI opens (Ctrl-C ends it)',
  options: {
    url: {
      type: 'string',
      value: '<url>',
      description: 'The runtime on this machine that answers the calls, for example http://localhost:8787',
    },
    app: APP_OPTION,
  },
  examples: ['soul dev --url http://localhost:8787', 'soul dev --url http://localhost:8787 --app app_123 --json'],
  async run(context) {
    const runtimeUrl = httpUrlOption(context.options.url, '--url', 'http://localhost:8787', { base: true });
    // api() refuses a missing credential with the usual usage error (naming SOUL_TOKEN in CI).
    context.api();
    const { token } = context.credential()!;
    const app = await appId(context);
    const { signal } = context.io;
    const calls = new Set<Promise<void>>();
    let backoff = FIRST_BACKOFF_MS;
    let sessions = 0;
    let lastUser: string | null | undefined;
    const session: Session = {
      context,
      token,
      app,
      runtimeUrl,
      onReady(ready) {
        backoff = FIRST_BACKOFF_MS;
        sessions += 1;
        context.out.item(
          { ready: true, session_id: ready.session_id, app_id: ready.app_id, user_id: ready.user_id, url: runtimeUrl },
          `${sessions === 1 ? 'Ready' : 'Reconnected'}: test calls of ${ready.app_id}${ready.user_id ? ` for ${ready.user_id}` : ''} go to ${runtimeUrl} (session ${ready.session_id}). Ctrl-C to stop.`,
        );
        // Said once, not at every reconnect, unless it changes.
        if (ready.user_id === null && lastUser !== null) {
          context.out.note(
            'No user account has your developer account’s verified email, so no test install is routed here and no call will arrive. ' +
              'Sign up in the app with that email, verify it, and install the package.',
          );
        }
        lastUser = ready.user_id;
      },
      onCall(data) {
        const served = serve(context, token, runtimeUrl, data).finally(() => calls.delete(served));
        calls.add(served);
      },
    };
    while (!signal.aborted) {
      let reason: string;
      let retryAfterMs = 0;
      try {
        reason = (await connect(session)) ?? 'the service ended the stream';
      } catch (error) {
        if (isFatal(error)) throw error;
        reason = reasonOf(error);
        if (error instanceof ApiFailure && error.retryAfterSeconds !== null) retryAfterMs = error.retryAfterSeconds * 1000;
      }
      if (signal.aborted) break;
      const delay = Math.max(backoff, retryAfterMs);
      context.out.note(`The connection to ${context.baseUrl} ended (${reason}); reconnecting in ${Math.round(delay / 1000)} s.`);
      await wait(delay, signal);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
    // Calls in flight were stopped with the command: their failure is posted, so the service answers them at once.
    await Promise.allSettled([...calls]);
  },
};
