import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { REDIS } from '../../infra/redis/redis.module';
import { hashTag, type RedisClient } from '../../infra/redis/redis-client';
import type { ExecutionTarget } from '../marketplace/installs.service';
import { CapabilityDescriptor } from '@soul-service/rules';
import { tierLimits } from '../../common/app-tiers';
import { limitExceeded } from './bridge-limits';

/** How long a subscription lasts without being renewed (the gateway renews while the user's surface is open). */
export const SUBSCRIPTION_LEASE_SECONDS = 600;

export interface Subscription {
  installId: string;
  capability: string;
}

/**
 * Which realtime capabilities have a subscribed user, in Redis, shared by the
 * api (subscribe) and the worker's stream supervisor (which opens a stream per
 * subscription). Also the name of the pub/sub channel data is relayed on.
 */
@Injectable()
export class RealtimeSubscriptions {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  channel(installId: string, capability: string): string {
    return `${this.config.redisPrefix}:capability:${installId}:${capability}`;
  }

  /**
   * The registry's keys share one Redis Cluster hash tag: a subscription writes
   * its lease and both sets in one MULTI, and leases are read with MGET.
   */
  private get registry(): string {
    return hashTag(`${this.config.redisPrefix}:realtime`);
  }

  private get setKey(): string {
    return `${this.registry}:subs`;
  }

  private leaseKey(s: Subscription): string {
    return `${this.registry}:lease:${s.installId}:${s.capability}`;
  }

  private userKey(userId: string, appId: string): string {
    return `${this.registry}:user:${userId}:${appId}`;
  }

  /** Subscribes (or renews); refuses a new stream beyond the tier's concurrent connections per user and app. */
  async subscribe(target: ExecutionTarget, capability: CapabilityDescriptor) {
    const member = `${target.install_id}:${capability.name}`;
    const userKey = this.userKey(target.user_id, target.app_id);
    const live = await this.liveMembers(userKey);
    const limit = tierLimits(target.app_tier).realtimeConnections;
    if (!live.includes(member) && live.length >= limit) {
      throw limitExceeded(`At most ${limit} concurrent realtime connections per user and app`, 60);
    }
    await this.redis
      .multi()
      .set(this.leaseKey({ installId: target.install_id, capability: capability.name }), target.user_id, 'EX', SUBSCRIPTION_LEASE_SECONDS)
      .sadd(this.setKey, member)
      .sadd(userKey, member)
      .expire(userKey, SUBSCRIPTION_LEASE_SECONDS)
      .exec();
    return {
      channel: this.channel(target.install_id, capability.name),
      leaseSeconds: SUBSCRIPTION_LEASE_SECONDS,
      heartbeatInterval: capability.heartbeatInterval ?? null,
    };
  }

  /** Subscriptions whose lease is still running; lapsed ones are dropped. */
  async active(): Promise<Subscription[]> {
    const members = await this.redis.smembers(this.setKey);
    const subs = members.map((m) => {
      const at = m.lastIndexOf(':');
      return { installId: m.slice(0, at), capability: m.slice(at + 1) };
    });
    if (subs.length === 0) return [];
    const leases = await this.redis.mget(...subs.map((s) => this.leaseKey(s)));
    const lapsed = subs.filter((_, i) => leases[i] === null);
    if (lapsed.length > 0) await this.redis.srem(this.setKey, ...lapsed.map((s) => `${s.installId}:${s.capability}`));
    return subs.filter((_, i) => leases[i] !== null);
  }

  private async liveMembers(userKey: string): Promise<string[]> {
    const members = await this.redis.smembers(userKey);
    if (members.length === 0) return [];
    const leases = await this.redis.mget(
      ...members.map((m) => {
        const at = m.lastIndexOf(':');
        return this.leaseKey({ installId: m.slice(0, at), capability: m.slice(at + 1) });
      }),
    );
    const dead = members.filter((_, i) => leases[i] === null);
    if (dead.length > 0) await this.redis.srem(userKey, ...dead);
    return members.filter((_, i) => leases[i] !== null);
  }
}
