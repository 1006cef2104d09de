import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { REDIS } from '../redis/redis.module';
import { closeRedisClient, createRedisClient, isClustered, RedisClient } from '../redis/redis-client';

type Listener = (message: string) => void;

/**
 * Redis pub/sub for the gateway of this api instance, and the one way the
 * service publishes to it (fast path, durable copy, capability data). One
 * subscriber client (a subscribed connection can run no other command) holds
 * the channels of the users and capability streams that have a local socket;
 * the shared command client publishes. ioredis resubscribes after a reconnect.
 *
 * On a Redis Cluster it is sharded pub/sub (SPUBLISH/SSUBSCRIBE): a channel
 * lives on the node that owns its slot, so a publication crosses one node
 * instead of being broadcast over the cluster bus to all of them, and the
 * subscriber client holds one connection per primary. On one Redis, plain
 * PUBLISH/SUBSCRIBE, which anything else on that server can also use.
 */
@Injectable()
export class GatewayBus implements OnApplicationShutdown {
  private readonly logger = new Logger(GatewayBus.name);
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly sharded: boolean;
  private subscriber: RedisClient | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {
    this.sharded = isClustered(config);
  }

  /** Listens to a channel; the Redis subscription is made by the first listener. */
  async listen(channel: string, listener: Listener): Promise<void> {
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
    }
    set.add(listener);
    if (set.size !== 1) return;
    const subscriber = this.connection();
    await (this.sharded ? subscriber.ssubscribe(channel) : subscriber.subscribe(channel));
  }

  /** Stops a listener; the Redis subscription ends with the last one. */
  async unlisten(channel: string, listener: Listener): Promise<void> {
    const set = this.listeners.get(channel);
    if (!set?.delete(listener) || set.size > 0) return;
    this.listeners.delete(channel);
    const subscriber = this.subscriber;
    if (subscriber?.status !== 'ready') return;
    await (this.sharded ? subscriber.sunsubscribe(channel) : subscriber.unsubscribe(channel)).catch(() => undefined);
  }

  async publish(channel: string, payload: unknown): Promise<void> {
    await this.send(channel, JSON.stringify(payload));
  }

  /**
   * The real-time fast path: hands the message to this instance's own
   * listeners at once (no Redis round trip), then publishes it for the other
   * instances. This instance hears its own publication too; listeners dedupe
   * by message id (GatewayConnection.firstSight), as they must anyway for the
   * durable path's second copy.
   */
  async publishLocalFirst(channel: string, payload: unknown): Promise<void> {
    const message = JSON.stringify(payload);
    this.dispatch(channel, message);
    await this.send(channel, message);
  }

  async onApplicationShutdown(): Promise<void> {
    const subscriber = this.subscriber;
    this.subscriber = null;
    if (subscriber) await closeRedisClient(subscriber);
  }

  private async send(channel: string, message: string): Promise<void> {
    await (this.sharded ? this.redis.spublish(channel, message) : this.redis.publish(channel, message));
  }

  private dispatch(channel: string, message: string): void {
    for (const listener of this.listeners.get(channel) ?? []) {
      try {
        listener(message);
      } catch (error) {
        this.logger.error({ err: error, channel }, 'gateway listener failed');
      }
    }
  }

  private connection(): RedisClient {
    if (this.subscriber) return this.subscriber;
    const subscriber = createRedisClient(this.config, {
      retryStrategy: (times) => Math.min(times * 200, 2000),
      // The ready check sends INFO, which Redis refuses once the SUBSCRIBEs queued during
      // the first connect have gone out (many sockets connecting at once showed it).
      enableReadyCheck: false,
      shardedSubscribers: true,
    });
    let reported = false;
    subscriber.on('error', (error: Error) => {
      if (!reported) this.logger.warn(`gateway subscriber: ${error.message}`);
      reported = true;
    });
    subscriber.on('ready', () => (reported = false));
    subscriber.on(this.sharded ? 'smessage' : 'message', (channel: string, message: string) => this.dispatch(channel, message));
    this.subscriber = subscriber;
    return subscriber;
  }
}
