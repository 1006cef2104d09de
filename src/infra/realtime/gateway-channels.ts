import { hashTag } from '../redis/redis-client';

/**
 * Redis names of the gateway. Every one starts with `REDIS_PREFIX` (or `{REDIS_PREFIX`), so deployments and test runs
 * sharing a server stay apart. Keys used together in one MULTI share a Redis Cluster hash tag: a user's presence keys
 * the user id, the instance registry `{<prefix>:gateway}` (docs/decisions.md, "Redis Cluster"). Channels need none: a
 * publication names one channel.
 */

/** Pub/sub channel of one user: every api instance holding a socket of the user listens to it. */
export const userChannel = (prefix: string, userId: string) => `${prefix}:gateway:user:${userId}`;

/** Pub/sub channel the runtime bridge publishes realtime capability data to. */
export const capabilityChannel = (prefix: string, installId: string, capability: string) =>
  `${prefix}:capability:${installId}:${capability}`;

/** Sorted set of a user's live connections (member: connection id, score: expiry in ms). */
export const presenceConnectionsKey = (prefix: string, userId: string) => `${prefix}:presence:${hashTag(userId)}:connections`;

/** The status the user chose (`online`, `away`, `dnd`); expires with the connections. */
export const presenceStatusKey = (prefix: string, userId: string) => `${prefix}:presence:${hashTag(userId)}:status`;

/** Hash tag of the instance registry: an instance's keys and the set of instances change together in one MULTI. */
const registry = (prefix: string) => hashTag(`${prefix}:gateway`);

/** Set of api instances that ever held gateway sockets (members: instance ids). */
export const instancesKey = (prefix: string) => `${registry(prefix)}:instances`;

/** Liveness key of one api instance, refreshed every heartbeat. */
export const instanceAliveKey = (prefix: string, instanceId: string) => `${registry(prefix)}:instance:${instanceId}`;

/** Users that had sockets on one instance, so survivors can announce them offline if it crashes. */
export const instanceUsersKey = (prefix: string, instanceId: string) => `${registry(prefix)}:instance:${instanceId}:users`;

/** Short lock so only one survivor announces a crashed instance's users. */
export const instanceReapKey = (prefix: string, instanceId: string) => `${registry(prefix)}:instance:${instanceId}:reap`;

/** What travels on a user channel: one server event for every socket of that user. */
export interface BusEvent {
  type: string;
  data: Record<string, unknown>;
}
