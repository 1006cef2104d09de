/** Redis names of the gateway. Every one starts with `REDIS_PREFIX`, so deployments and test runs sharing a server stay apart. */

/** Pub/sub channel of one user: every api instance holding a socket of the user listens to it. */
export const userChannel = (prefix: string, userId: string) => `${prefix}:gateway:user:${userId}`;

/** Pub/sub channel the runtime bridge publishes realtime capability data to. */
export const capabilityChannel = (prefix: string, installId: string, capability: string) =>
  `${prefix}:capability:${installId}:${capability}`;

/** Sorted set of a user's live connections (member: connection id, score: expiry in ms). */
export const presenceConnectionsKey = (prefix: string, userId: string) => `${prefix}:presence:${userId}:connections`;

/** The status the user chose (`online`, `away`, `dnd`); expires with the connections. */
export const presenceStatusKey = (prefix: string, userId: string) => `${prefix}:presence:${userId}:status`;

/** Set of api instances that ever held gateway sockets (members: instance ids). */
export const instancesKey = (prefix: string) => `${prefix}:gateway:instances`;

/** Liveness key of one api instance, refreshed every heartbeat. */
export const instanceAliveKey = (prefix: string, instanceId: string) => `${prefix}:gateway:instance:${instanceId}`;

/** Users that had sockets on one instance, so survivors can announce them offline if it crashes. */
export const instanceUsersKey = (prefix: string, instanceId: string) => `${prefix}:gateway:instance:${instanceId}:users`;

/** Short lock so only one survivor announces a crashed instance's users. */
export const instanceReapKey = (prefix: string, instanceId: string) => `${prefix}:gateway:instance:${instanceId}:reap`;

/** What travels on a user channel: one server event for every socket of that user. */
export interface BusEvent {
  type: string;
  data: Record<string, unknown>;
}
