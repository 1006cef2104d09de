import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { REDIS } from '../redis/redis.module';
import { hashTag, RedisClient } from '../redis/redis-client';
import { FENCE_PREFIX, FenceMembership } from '../database/notified-cache';
import { notify } from '../database/notify';
import { GatewayBus } from './gateway-bus';

/** How long a member stays listed without renewing; renewed every third of it. */
const MEMBERSHIP_MS = 15_000;
/** Longest `pass` waits for members that do not answer (a process that died without leaving). */
export const FENCE_TIMEOUT_MS = 1_000;

interface Waiter {
  missing: Set<string>;
  done: () => void;
}

/**
 * A barrier across api instances for the caches that PostgreSQL notifications
 * keep (`NotifiedCache`): `pass(channel)` resolves once every listening cache
 * on that channel, in every process, has handled every notification committed
 * before the call. Code that revokes something (a logout, a session revoked)
 * awaits it before answering, so that when the answer arrives no instance
 * still accepts what was revoked: "immediate" as the client sees it, not
 * "within the notification's delivery".
 *
 * How: each listening cache is a member of a Redis sorted set per channel
 * (score: until when it is listed; renewed while its listener is up, removed
 * when the listener is lost or stopped, when it remembers nothing anyway).
 * `pass` reads the members, sends `NOTIFY <channel>, '!fence <reply> <token>'`
 * and waits for each member's answer on this process's reply channel.
 * PostgreSQL delivers a channel's notifications in commit order and each
 * cache handles them synchronously in that order, so a member that answers
 * the fence has dropped what the earlier changes touched. A member that does
 * not answer within `FENCE_TIMEOUT_MS` (a process that died without leaving)
 * is logged and waited for no longer; Redis unavailable makes `pass` return at
 * once: the notification itself still arrives, only the wait is lost.
 */
@Injectable()
export class CacheFence implements FenceMembership, OnApplicationShutdown {
  private readonly logger = new Logger(CacheFence.name);
  /** Where members answer this process's fences. */
  private readonly replyChannel: string;
  private readonly waiting = new Map<string, Waiter>();
  /** Listed members: member id -> channel. */
  private readonly members = new Map<string, string>();
  private replying: Promise<void> | null = null;
  private renewal: NodeJS.Timeout | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly bus: GatewayBus,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {
    this.replyChannel = `${config.redisPrefix}:fence:reply:${randomUUID()}`;
  }

  /** Lists a cache that listens on `channel` (call when its listener is up); returns its member id for `leave` and `answer`. */
  join(channel: string): string {
    const memberId = randomUUID();
    this.members.set(memberId, channel);
    this.renew([memberId]);
    if (!this.renewal) {
      this.renewal = setInterval(() => this.renew([...this.members.keys()]), MEMBERSHIP_MS / 3);
      this.renewal.unref();
    }
    return memberId;
  }

  /** Unlists a cache (its listener is lost or stopped: it remembers nothing, so no fence needs to wait for it). */
  leave(memberId: string): void {
    const channel = this.members.get(memberId);
    if (channel === undefined) return;
    this.members.delete(memberId);
    this.redis.zrem(membersKey(this.config.redisPrefix, channel), memberId).catch(() => undefined);
  }

  /** For a listening cache: answers a fence payload of its channel. */
  answer(payload: string, memberId: string): void {
    const [replyChannel, token] = payload.slice(FENCE_PREFIX.length).split(' ');
    if (replyChannel && token) {
      this.bus.publish(replyChannel, { token, member: memberId }).catch((error: Error) => {
        this.logger.warn(`fence answer not sent: ${error.message}`);
      });
    }
  }

  /** Resolves once every listening cache on `channel` has handled the notifications committed before this call. */
  async pass(channel: string): Promise<void> {
    let missing: Set<string>;
    try {
      await withTimeout(this.listenForAnswers(), FENCE_TIMEOUT_MS, 'the reply channel is not subscribed');
      missing = new Set(await this.redis.zrangebyscore(membersKey(this.config.redisPrefix, channel), Date.now(), '+inf'));
    } catch (error) {
      this.logger.warn(`fence on ${channel} skipped: ${(error as Error).message}`);
      return;
    }
    if (missing.size === 0) return;
    const token = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const answered = new Promise<void>((done) => {
      this.waiting.set(token, { missing, done });
      timer = setTimeout(() => {
        this.logger.warn(`fence on ${channel}: no answer within ${FENCE_TIMEOUT_MS} ms from ${[...missing].join(', ')}`);
        done();
      }, FENCE_TIMEOUT_MS);
    });
    try {
      await notify(this.dataSource, channel, `${FENCE_PREFIX}${this.replyChannel} ${token}`);
      await answered;
    } finally {
      clearTimeout(timer);
      this.waiting.delete(token);
    }
  }

  onApplicationShutdown(): void {
    if (this.renewal) clearInterval(this.renewal);
    this.renewal = null;
    for (const memberId of [...this.members.keys()]) this.leave(memberId);
    for (const waiter of this.waiting.values()) waiter.done();
  }

  private listenForAnswers(): Promise<void> {
    this.replying ??= this.bus
      .listen(this.replyChannel, (message) => {
        const { token, member } = parseAnswer(message);
        const waiter = token === null ? undefined : this.waiting.get(token);
        if (!waiter || member === null) return;
        waiter.missing.delete(member);
        if (waiter.missing.size === 0) waiter.done();
      })
      .catch((error: Error) => {
        this.replying = null;
        throw error;
      });
    return this.replying;
  }

  private renew(memberIds: string[]): void {
    const until = Date.now() + MEMBERSHIP_MS;
    const byChannel = new Map<string, string[]>();
    for (const id of memberIds) {
      const channel = this.members.get(id);
      if (channel !== undefined) byChannel.set(channel, [...(byChannel.get(channel) ?? []), id]);
    }
    for (const [channel, ids] of byChannel) {
      const key = membersKey(this.config.redisPrefix, channel);
      // Members of processes that died without leaving fall out once their listing ends.
      this.redis
        .multi()
        .zadd(key, ...ids.flatMap((id) => [until, id]))
        .zremrangebyscore(key, '-inf', Date.now())
        .pexpire(key, MEMBERSHIP_MS * 2)
        .exec()
        .catch((error: Error) => this.logger.warn(`fence membership not renewed: ${error.message}`));
    }
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The members of a channel: one key, hash-tagged so a Redis Cluster keeps it on one node. */
const membersKey = (prefix: string, channel: string) => `${hashTag(`${prefix}:fence`)}:${channel}:members`;

/** A member's answer on the reply channel; anything else published there (it is a plain Redis channel) is ignored. */
function parseAnswer(message: string): { token: string | null; member: string | null } {
  try {
    const parsed = JSON.parse(message) as { token?: unknown; member?: unknown };
    return {
      token: typeof parsed?.token === 'string' ? parsed.token : null,
      member: typeof parsed?.member === 'string' ? parsed.member : null,
    };
  } catch {
    return { token: null, member: null };
  }
}
