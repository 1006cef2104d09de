import { Inject, Injectable, Logger } from '@nestjs/common';
import { newId } from '../../common/ids';
import { ProblemError } from '../../common/errors/problem-error';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { GatewayBus } from '../../infra/realtime/gateway-bus';
import { REDIS } from '../../infra/redis/redis.module';
import type { RedisClient } from '../../infra/redis/redis-client';
import type { Exchanged, OutboundHttp, OutboundInit } from '../../common/http/outbound-http';
import type { ExecutionTarget } from '../marketplace/installs.service';
import { DevSessionsRepository } from './dev-sessions.repository';

/** A session is live while its stream renews its key: a dead api instance's session lapses after three missed renewals. */
const RENEWALS_BEFORE_LAPSE = 3;
/**
 * How long an instance trusts what it read of an app's session: every call of the bridge asks, so the answer
 * is kept this long per app (one Redis read per app per second at most). A session opened elsewhere takes
 * effect within it; one opened or closed on this instance at once.
 */
const SESSION_MEMORY_MS = 1_000;

/** One runtime call carried to the developer's CLI (`event: call` of the session stream). */
export interface DevCall {
  call_id: string;
  method: 'POST' | 'GET';
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** What the CLI posts back: the local runtime's answer, or why there was none. */
export type DevAnswer =
  { status: number; headers?: Record<string, string>; body: string } | { failure: 'unreachable' | 'timeout'; detail: string };

/** The local runtime's answer, as the CLI relayed it. */
type LocalAnswer = Extract<DevAnswer, { status: number }>;

/** A relayed answer as `OutboundHttp.exchange` gives one: header names in lower case, the body's bytes, the size cap applied. */
function exchanged(answer: LocalAnswer, maxBytes: number): Exchanged {
  if (!Number.isInteger(answer.status) || answer.status < 200 || answer.status > 599)
    throw new DevTunnelError(`soul dev: the local runtime answered an invalid HTTP status ${answer.status}`);
  const body = Buffer.from(answer.body, 'utf8');
  if (body.length > maxBytes) return { kind: 'oversize', declared: null };
  const headers = Object.fromEntries(Object.entries(answer.headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]));
  return { kind: 'answer', status: answer.status, headers, body };
}

interface SessionRecord {
  sessionId: string;
  userId: string | null;
}

/** The error a tunnelled call fails with when the CLI answered none: the bridge reports runtime_unavailable. */
class DevTunnelError extends Error {
  readonly code = 'EDEVTUNNEL';
}

/**
 * `soul dev`: a developer's CLI holds a stream open (`GET /v1/providers/dev/session`) and the runtime bridge
 * sends that developer's own test calls through it to a runtime on their machine, which needs no public URL
 * and no tunnel of a third party (as Slack's Socket Mode and `stripe listen` do).
 *
 * Only calls for installs of the developer's own user account (its verified email is the developer's verified
 * email) take this path; everyone else's calls go to the package's runtime URL as always. The session is a
 * Redis key per app (one session per app: the newest wins) renewed by the stream; a call is published on the
 * session's channel, whichever api instance holds the stream hands it to the CLI, and the CLI's answer (to any
 * instance) is published on the call's channel to the instance whose bridge waits for it.
 */
@Injectable()
export class DevSessions {
  private readonly logger = new Logger(DevSessions.name);
  private readonly known = new Map<string, { record: SessionRecord | null; until: number }>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly bus: GatewayBus,
    private readonly repository: DevSessionsRepository,
  ) {}

  private sessionKey(appId: string): string {
    return `${this.config.redisPrefix}:dev:session:${appId}`;
  }

  private callKey(callId: string): string {
    return `${this.config.redisPrefix}:dev:call:${callId}`;
  }

  private callsChannel(sessionId: string): string {
    return `${this.config.redisPrefix}:dev:calls:${sessionId}`;
  }

  private answerChannel(callId: string): string {
    return `${this.config.redisPrefix}:dev:answer:${callId}`;
  }

  /**
   * Opens the app's session for its developer; `onCall` receives each call until `close()` is called. A
   * session opened later for the same app takes over (the older stream gets no more calls and lapses).
   */
  async open(
    appId: string,
    developerId: string,
    onCall: (call: DevCall) => void,
  ): Promise<{ sessionId: string; userId: string | null; renew: () => Promise<void>; close: () => Promise<void> }> {
    const userId = await this.repository.ownUserOf(developerId);
    const sessionId = newId('dses');
    const channel = this.callsChannel(sessionId);
    const listener = (message: string) => onCall(JSON.parse(message) as DevCall);
    await this.bus.listen(channel, listener);
    const record = JSON.stringify({ sessionId, userId } satisfies SessionRecord);
    const renew = async () => {
      if (userId)
        await this.redis.set(this.sessionKey(appId), record, 'PX', RENEWALS_BEFORE_LAPSE * this.config.runtimeBridge.devSessionRenewMs);
    };
    await renew();
    this.known.set(appId, { record: userId ? { sessionId, userId } : null, until: Date.now() + SESSION_MEMORY_MS });
    return {
      sessionId,
      userId,
      renew,
      close: async () => {
        await this.bus.unlisten(channel, listener);
        // Only this session's record: a newer session of the app stays.
        const current = await this.redis.get(this.sessionKey(appId));
        if (current === record) await this.redis.del(this.sessionKey(appId));
        this.known.delete(appId);
      },
    };
  }

  /** The app's open session, as this instance last read it (at most `SESSION_MEMORY_MS` ago). */
  private async sessionOf(appId: string): Promise<SessionRecord | null> {
    const now = Date.now();
    const known = this.known.get(appId);
    if (known && known.until > now) return known.record;
    const raw = await this.redis.get(this.sessionKey(appId));
    const record = raw ? (JSON.parse(raw) as SessionRecord) : null;
    if (this.known.size > 10_000) this.known.clear();
    this.known.set(appId, { record, until: now + SESSION_MEMORY_MS });
    return record;
  }

  /** Whether calls for this install go to the developer's machine (`soul dev` runs and it is their own install). */
  async routes(target: Pick<ExecutionTarget, 'app_id' | 'user_id'>): Promise<boolean> {
    const session = await this.sessionOf(target.app_id);
    return session !== null && session.userId !== null && session.userId === target.user_id;
  }

  /** The transport for a call to this install: the developer's open session for their own installs, else null. */
  async transportFor(target: Pick<ExecutionTarget, 'app_id' | 'user_id' | 'runtime_url'>): Promise<Pick<OutboundHttp, 'exchange'> | null> {
    if (!(await this.routes(target))) return null;
    const { sessionId } = (await this.sessionOf(target.app_id))!;
    // Paths are sent relative to the runtime URL: `soul dev --url` names the local runtime's root, whatever base path the public one has.
    const base = new URL(target.runtime_url).pathname.replace(/\/+$/, '');
    return {
      exchange: async (url: string | URL, init: OutboundInit & { maxBytes: number }) => {
        // The bridge bounds the call by `timeoutMs`: the wait for the CLI's answer is bounded by it too.
        const signal = init.signal ?? (init.timeoutMs === undefined ? undefined : AbortSignal.timeout(init.timeoutMs));
        return exchanged(await this.relay(target.app_id, sessionId, base, url, { ...init, signal }), init.maxBytes);
      },
    };
  }

  /** Sends one call through the session and waits for the CLI's answer, as long as the bridge's own timeout allows. */
  private async relay(appId: string, sessionId: string, base: string, target: string | URL, init: OutboundInit): Promise<LocalAnswer> {
    const url = new URL(target);
    const path = base && url.pathname.startsWith(`${base}/`) ? url.pathname.slice(base.length) : url.pathname;
    const call: DevCall = {
      call_id: newId('dcall'),
      method: init.method === 'GET' ? 'GET' : 'POST',
      path: `${path}${url.search}`,
      headers: { ...init.headers },
      body: init.body ?? '',
    };
    const channel = this.answerChannel(call.call_id);
    let settle: (answer: DevAnswer) => void = () => undefined;
    const answered = new Promise<DevAnswer>((resolve) => (settle = resolve));
    const listener = (message: string) => settle(JSON.parse(message) as DevAnswer);
    await this.bus.listen(channel, listener);
    try {
      // The call belongs to this app: only its CLI may answer it, and only while the bridge waits.
      await this.redis.set(this.callKey(call.call_id), appId, 'EX', 120);
      await this.bus.publish(this.callsChannel(sessionId), call);
      const answer = await abortable(answered, init.signal);
      if ('failure' in answer)
        throw new DevTunnelError(
          `soul dev: the local runtime ${answer.failure === 'timeout' ? 'timed out' : 'could not be reached'} (${answer.detail})`,
        );
      return answer;
    } finally {
      await this.bus.unlisten(channel, listener);
      await this.redis.del(this.callKey(call.call_id)).catch(() => undefined);
    }
  }

  /** The CLI's answer to a call of one of the principal's apps: 404 for an unknown, expired or foreign call. */
  async answer(appIds: string[], callId: string, answer: DevAnswer): Promise<void> {
    const key = this.callKey(callId);
    // Ownership is read without touching the call, so another app's attempt cannot disturb it; then the DEL that
    // removes the key is the one answer that counts (DEL answers 1 once), however many arrive at the same moment.
    const appId = await this.redis.get(key);
    if (!appId || !appIds.includes(appId) || (await this.redis.del(key)) !== 1) {
      throw new ProblemError('not_found', `No call ${callId} waiting for an answer`);
    }
    await this.bus.publish(this.answerChannel(callId), answer);
    this.logger.debug({ callId }, 'dev call answered');
  }
}

/** Resolves with `promise`, or rejects with the signal's reason when it aborts first (the bridge's timeout). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
