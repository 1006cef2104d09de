import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { REDIS } from '../../infra/redis/redis.module';
import type { RedisClient } from '../../infra/redis/redis-client';
import {
  instanceAliveKey,
  instanceReapKey,
  instancesKey,
  instanceUsersKey,
  presenceConnectionsKey,
  presenceStatusKey,
} from '../../infra/realtime/gateway-channels';
import { PresenceStatus } from './gateway-protocol';

export type PresenceState = PresenceStatus | 'offline';

/**
 * Presence in Redis, shared by every api instance. A user is online while at
 * least one of their connections has refreshed its entry within the expiry
 * (two heartbeats and a second), so the users of a crashed instance go
 * offline by themselves without anyone cleaning up.
 */
@Injectable()
export class Presence {
  /** This api instance, in the registry survivors use to notice a crash. */
  readonly instanceId = randomUUID();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  get ttlMs(): number {
    return this.config.gateway.heartbeatMs * 2 + 1000;
  }

  /** Live connections of the user across instances (expired entries dropped first). */
  async connectionCount(userId: string): Promise<number> {
    const key = presenceConnectionsKey(this.config.redisPrefix, userId);
    const [, [, count]] = (await this.redis.multi().zremrangebyscore(key, '-inf', Date.now()).zcard(key).exec()) as [
      [Error | null, number],
      [Error | null, number],
    ];
    return count;
  }

  /** Registers or refreshes a connection; answers whether it is the user's only one (they just came online). */
  async touch(userId: string, connectionId: string): Promise<boolean> {
    const key = presenceConnectionsKey(this.config.redisPrefix, userId);
    const now = Date.now();
    const results = await this.redis
      .multi()
      .zremrangebyscore(key, '-inf', now)
      .zadd(key, now + this.ttlMs, connectionId)
      .zcard(key)
      .pexpire(key, this.ttlMs)
      .pexpire(presenceStatusKey(this.config.redisPrefix, userId), this.ttlMs)
      .exec();
    const added = results?.[1]?.[1] as number;
    const count = results?.[2]?.[1] as number;
    return added === 1 && count === 1;
  }

  /**
   * Refreshes the entries of many connections (one heartbeat slot) without
   * waiting for Redis per connection: per user one ZADD of its connections and
   * the two PEXPIREs, all issued in one turn of the event loop, so the shared
   * client's auto-pipelining sends them as one pipeline per Redis node (one
   * round trip on a single server; a plain pipeline would not do on a cluster,
   * where it may only touch one node's slots). A connection whose entry was
   * lost (Redis restarted) is added again, as `touch` would.
   */
  async refresh(connections: Iterable<{ userId: string; connectionId: string }>): Promise<void> {
    const byUser = new Map<string, Array<string | number>>();
    const expiresAt = Date.now() + this.ttlMs;
    for (const { userId, connectionId } of connections) {
      const members = byUser.get(userId);
      if (members) members.push(expiresAt, connectionId);
      else byUser.set(userId, [expiresAt, connectionId]);
    }
    const prefix = this.config.redisPrefix;
    await Promise.all(
      [...byUser].flatMap(([userId, members]) => {
        const key = presenceConnectionsKey(prefix, userId);
        return [
          this.redis.zadd(key, ...members),
          this.redis.pexpire(key, this.ttlMs),
          this.redis.pexpire(presenceStatusKey(prefix, userId), this.ttlMs),
        ];
      }),
    );
  }

  /** Removes a connection; answers whether the user has no connection left (they went offline). */
  async leave(userId: string, connectionId: string): Promise<boolean> {
    const key = presenceConnectionsKey(this.config.redisPrefix, userId);
    const results = await this.redis.multi().zrem(key, connectionId).zremrangebyscore(key, '-inf', Date.now()).zcard(key).exec();
    const remaining = results?.[2]?.[1] as number;
    if (remaining === 0) await this.redis.del(presenceStatusKey(this.config.redisPrefix, userId));
    return remaining === 0;
  }

  async setStatus(userId: string, status: PresenceStatus): Promise<void> {
    await this.redis.set(presenceStatusKey(this.config.redisPrefix, userId), status, 'PX', this.ttlMs);
  }

  /** Current state of each user, in the order given. */
  async stateOf(userIds: string[]): Promise<PresenceState[]> {
    if (userIds.length === 0) return [];
    const now = Date.now();
    // One pipeline per user: on a cluster a pipeline may only touch one slot, and a user's keys share theirs.
    return Promise.all(
      userIds.map(async (id) => {
        const results =
          (await this.redis
            .pipeline()
            .zcount(presenceConnectionsKey(this.config.redisPrefix, id), now, '+inf')
            .get(presenceStatusKey(this.config.redisPrefix, id))
            .exec()) ?? [];
        const count = results[0]?.[1] as number;
        const status = results[1]?.[1] as PresenceStatus | null;
        return count > 0 ? (status ?? 'online') : 'offline';
      }),
    );
  }

  /** Marks this instance alive (outliving its connections' entries by one heartbeat) and records users it holds. */
  async heartbeatInstance(userIds: Iterable<string> = []): Promise<void> {
    const prefix = this.config.redisPrefix;
    const ttl = this.ttlMs + this.config.gateway.heartbeatMs;
    const users = [...userIds];
    const multi = this.redis
      .multi()
      .set(instanceAliveKey(prefix, this.instanceId), '1', 'PX', ttl)
      .sadd(instancesKey(prefix), this.instanceId);
    if (users.length > 0) multi.sadd(instanceUsersKey(prefix, this.instanceId), ...users);
    await multi.exec();
  }

  /** Forgets this instance on a clean shutdown: its connections left one by one already. */
  async retireInstance(): Promise<void> {
    const prefix = this.config.redisPrefix;
    await this.redis
      .multi()
      .del(instanceAliveKey(prefix, this.instanceId), instanceUsersKey(prefix, this.instanceId))
      .srem(instancesKey(prefix), this.instanceId)
      .exec();
  }

  /**
   * Finds instances whose liveness key expired (crashed, or cut off from
   * Redis) and answers the users they held who now have no connection
   * anywhere. One survivor takes each dead instance (lock), so each user is
   * announced offline once.
   */
  async reapDeadInstances(): Promise<string[]> {
    const prefix = this.config.redisPrefix;
    const offline: string[] = [];
    for (const id of await this.redis.smembers(instancesKey(prefix))) {
      if (id === this.instanceId || (await this.redis.exists(instanceAliveKey(prefix, id))) === 1) continue;
      if ((await this.redis.set(instanceReapKey(prefix, id), this.instanceId, 'PX', 10_000, 'NX')) !== 'OK') continue;
      for (const userId of await this.redis.smembers(instanceUsersKey(prefix, id))) {
        if ((await this.connectionCount(userId)) === 0) {
          await this.redis.del(presenceStatusKey(prefix, userId));
          offline.push(userId);
        }
      }
      await this.redis.multi().del(instanceUsersKey(prefix, id)).srem(instancesKey(prefix), id).exec();
    }
    return offline;
  }
}
