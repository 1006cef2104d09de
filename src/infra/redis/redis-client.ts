import Redis, { Cluster } from 'ioredis';
import type { AppConfig } from '../../config/app-config';
import { redisOptionsFromUrl } from './redis-options';

/**
 * A connection to the service's Redis: one server, or a Redis Cluster when
 * `REDIS_CLUSTER_NODES` is set. Both have the same command interface; what
 * differs is that on a cluster a command, a MULTI or a script may only touch
 * keys of one hash slot (see `hashTag`), and pub/sub is sharded (GatewayBus).
 */
export type RedisClient = Redis | Cluster;

/** How a connection behaves while Redis is away: the same on one server and on a cluster. */
export interface RedisBehaviour {
  /** Queue commands while disconnected (default) or fail them at once. */
  enableOfflineQueue?: boolean;
  /** Reconnection attempts a queued command survives before it fails; null: it waits for Redis. */
  maxRetriesPerRequest?: number | null;
  /** Delay (ms) before reconnecting; on a cluster, before reconnecting after every node failed. */
  retryStrategy?: (times: number) => number | null;
  enableReadyCheck?: boolean;
  /** Cluster only: one subscriber connection per primary, for SSUBSCRIBE (GatewayBus). */
  shardedSubscribers?: boolean;
  /**
   * Send the commands issued in one event-loop turn as one write (ioredis's
   * auto-pipelining). For the shared command client, where many requests and
   * frames each send a command or two; never for blocking or subscriber connections.
   */
  enableAutoPipelining?: boolean;
}

export const isClustered = (config: AppConfig): boolean => config.redisClusterNodes.length > 0;

/**
 * The one place a Redis connection is made (the shared command client, the
 * gateway's subscriber, BullMQ's cluster connection). On a cluster the URL
 * lends its user, password and TLS to every node; its host is not used.
 */
export function createRedisClient(config: AppConfig, behaviour: RedisBehaviour = {}): RedisClient {
  const { shardedSubscribers, enableOfflineQueue, maxRetriesPerRequest, retryStrategy, enableReadyCheck, enableAutoPipelining } = behaviour;
  const fromUrl = redisOptionsFromUrl(config.redisUrl);
  if (!isClustered(config)) {
    return new Redis({ ...fromUrl, enableOfflineQueue, maxRetriesPerRequest, retryStrategy, enableReadyCheck, enableAutoPipelining });
  }
  const { username, password, tls } = fromUrl;
  return new Cluster(config.redisClusterNodes, {
    // The cluster's own offline queue: with it off, a command fails at once while no node is reachable.
    enableOfflineQueue: enableOfflineQueue ?? true,
    enableReadyCheck: enableReadyCheck ?? true,
    clusterRetryStrategy: retryStrategy,
    shardedSubscribers: shardedSubscribers ?? false,
    enableAutoPipelining,
    // Node connections are opened lazily by the first command routed to them, so
    // their own offline queue stays on (the default) or that command would fail.
    redisOptions: { username, password, tls, maxRetriesPerRequest },
    // With TLS, keep the node addresses the cluster announces as they are, so the
    // certificate is checked against them (managed clusters announce host names).
    ...(tls ? { dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address) } : {}),
  });
}

/** Closes a client: QUIT when connected (pending replies arrive), else drops the socket. */
export async function closeRedisClient(client: RedisClient): Promise<void> {
  if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
  else client.disconnect();
}

/**
 * A Redis Cluster hash tag: keys that share it live in one slot, so a MULTI or
 * a script may use them together. Only the text between the first `{` and the
 * next `}` is hashed.
 */
export const hashTag = (value: string): string => `{${value}}`;

/**
 * GET of many keys in one round trip. MGET needs every key in one slot on a
 * cluster; there the GETs go out together instead (ioredis sends each to its
 * node without waiting for the previous reply).
 */
export async function getMany(redis: RedisClient, keys: string[]): Promise<Array<string | null>> {
  if (keys.length === 0) return [];
  if (!redis.isCluster) return redis.mget(...keys);
  return Promise.all(keys.map((key) => redis.get(key)));
}
