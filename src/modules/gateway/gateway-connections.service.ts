import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { AccessTokens, InvalidAccessToken } from '../access/access-tokens';
import type { AuthenticatedUser } from '../access/authenticated-user';
import type { UserTier } from '../access/authenticated-user';
import { SessionCache } from '../access/session-cache';
import { Sessions } from '../access/sessions.service';
import { UsersService } from '../auth/users.service';
import { ContactsService, MutualLink } from '../contacts/contacts.service';
import { MessageReceipts } from '../messages/message-receipts.service';
import { GatewayBus } from '../../infra/realtime/gateway-bus';
import { BusEvent, userChannel } from '../../infra/realtime/gateway-channels';
import { GatewayConnection } from './gateway-connection';
import { HeartbeatWheel } from './heartbeat-wheel';
import { CLOSE } from './gateway-protocol';
import { Presence, PresenceState } from './presence.service';

/** Simultaneous connections of one user across all instances, per tier; one more is closed with 4429. */
export const CONNECTION_LIMITS: Record<UserTier, number> = { free: 5, pro: 20, enterprise: 100 };
/** How long shutdown waits for clients to answer the 1001 close before cutting them off. */
const CLOSE_GRACE_MS = 2000;
/**
 * Users whose sessions are re-checked at once when many are due (after the listening connection restarts): their
 * lookups go to the database together, in one statement (`Sessions.check` batches the lookups of one turn).
 */
const SWEEP_USERS_AT_ONCE = 200;

/**
 * The sockets of this api instance: authentication at connect, heartbeats,
 * token expiry, presence and delivery of bus events to local sockets.
 *
 * A socket lives only as long as its session: the `user_auth_changed`
 * notification that drops a user from the session cache on every instance
 * (see SessionCache) makes this instance re-check that user's sockets and
 * close those whose session was revoked (4401), whose user is gone (4403) or
 * whose soul record was deleted (4410). Bus messages wait while the re-check
 * runs, and every inbound frame is checked like an HTTP request (`admitFrame`).
 */
@Injectable()
export class GatewayConnections implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('Gateway');
  private readonly connections = new Set<GatewayConnection>();
  private readonly byUser = new Map<string, Set<GatewayConnection>>();
  private readonly releasing = new Set<Promise<void>>();
  /**
   * Each connection's heartbeat (ping, silence check, presence refresh, and the
   * session re-check while change notifications are down) runs at its own phase
   * of the period: a slot of the wheel at a time, never every socket at once.
   */
  private readonly wheel: HeartbeatWheel<GatewayConnection>;
  private draining = false;
  private stopWatching: (() => void) | null = null;
  /** Session-change notifications seen; a connection set up across one is re-checked before `ready`. */
  private changesSeen = 0;
  /** Connections waiting for a session re-check (a notification listener restart, or heartbeats while it is down), in order. */
  private readonly recheckQueue = new Set<GatewayConnection>();
  private rechecking = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tokens: AccessTokens,
    private readonly checkedSessions: SessionCache,
    private readonly sessions: Sessions,
    private readonly users: UsersService,
    private readonly contacts: ContactsService,
    private readonly receipts: MessageReceipts,
    private readonly presence: Presence,
    private readonly bus: GatewayBus,
  ) {
    this.wheel = new HeartbeatWheel(config.gateway.heartbeatMs, (connections, slot) => this.beat(connections, slot));
  }

  onModuleInit(): void {
    this.wheel.start();
    this.stopWatching = this.checkedSessions.watch((userId) => this.sessionsChanged(userId));
  }

  get size(): number {
    return this.connections.size;
  }

  /**
   * Verifies the `token` query parameter like a bearer token and, on success,
   * registers the socket and sends `ready`. Failures close the socket: 4401
   * for a missing, invalid or expired token or an ended session, 4403 when the
   * user no longer exists, 4429 over the tier's connection limit. Once open,
   * the socket closes at the token's expiry (4401) and when its session ends.
   */
  async accept(socket: WebSocket, request: IncomingMessage): Promise<GatewayConnection | null> {
    if (this.draining) {
      socket.close(CLOSE.GOING_AWAY, 'server shutting down');
      return null;
    }
    const token = new URL(request.url ?? '/', 'http://gateway.invalid').searchParams.get('token');
    if (!token) {
      socket.close(CLOSE.INVALID_TOKEN, 'missing token query parameter');
      return null;
    }
    let claims: Awaited<ReturnType<AccessTokens['verify']>>;
    try {
      claims = await this.tokens.verify(token);
    } catch (error) {
      const expired = error instanceof InvalidAccessToken && error.reason === 'expired';
      socket.close(CLOSE.INVALID_TOKEN, expired ? 'token expired' : 'token invalid');
      return null;
    }
    const changesBefore = this.changesSeen;
    const user = await this.sessions.resolve(claims.sub, claims.sid);
    if (!user) {
      const exists = await this.users.stillExists(claims.sub);
      socket.close(exists ? CLOSE.INVALID_TOKEN : CLOSE.USER_DELETED, exists ? 'session ended' : 'user deleted');
      return null;
    }
    if (socket.readyState !== WebSocket.OPEN) return null;
    const limit = CONNECTION_LIMITS[user.tier];
    if ((await this.presence.connectionCount(user.id)) >= limit) {
      socket.close(CLOSE.ABUSE, `connection limit of ${limit} reached`);
      return null;
    }

    const connection = new GatewayConnection(socket, user, new Date(claims.exp * 1000), this.config.gateway);
    this.connections.add(connection);
    this.wheel.add(connection);
    let mine = this.byUser.get(user.id);
    if (!mine) {
      mine = new Set();
      this.byUser.set(user.id, mine);
    }
    mine.add(connection);
    // A change announced since the session was checked above found no socket to re-check: re-check this one (holding bus messages until done).
    if (this.changesSeen !== changesBefore) void this.recheck([connection]);
    socket.on('close', () => this.release(connection));
    socket.on('pong', () => (connection.lastSeen = Date.now()));
    socket.on('error', () => undefined);
    await this.listen(connection, userChannel(this.config.redisPrefix, user.id), (message) => this.deliver(connection, message));
    await this.presence.heartbeatInstance([user.id]);
    const cameOnline = await this.presence.touch(user.id, connection.id);
    const mutual = await this.contacts.mutualLinks(user.id);
    const states = await this.presence.stateOf(mutual.map((link) => link.userId));
    await connection.settled();
    if (!this.connections.has(connection)) {
      // Closed while we were setting it up: undo what release() could not see yet.
      for (const channel of [...connection.listeners.keys()]) await this.unlisten(connection, channel);
      await this.presence.leave(user.id, connection.id);
      return null;
    }
    // Closing after a re-check: release() follows on 'close' and undoes the rest.
    if (!connection.open) return null;
    connection.send({
      type: 'ready',
      data: {
        user: { id: user.id, tier: user.tier },
        session_id: user.sessionId,
        connection_id: connection.id,
        heartbeat_ms: this.config.gateway.heartbeatMs,
        expires_at: connection.expiresAt.toISOString(),
        presence: mutual.map((link, i) => ({ contact_id: link.contactId, status: states[i] })),
      },
    });
    this.scheduleExpiry(connection);
    // Not awaited: the caller must get the connection before any I/O runs, or frames sent right after `ready` would wait.
    if (cameOnline)
      void this.announce(user.id, 'online', mutual).catch((error: unknown) =>
        this.logger.warn(`presence announcement failed: ${(error as Error).message}`),
      );
    return connection;
  }

  /**
   * Whether a frame from this connection may be handled: its session still
   * stands, read from PostgreSQL after any re-check under way. Not the cached
   * check: that is dropped by the same notification that closes the socket, so
   * it would add nothing while the notification is late (the instance is busy).
   * Closes the connection when not. Throws when the check itself fails.
   */
  async admitFrame(connection: GatewayConnection): Promise<boolean> {
    await connection.settled();
    if (!connection.open) return false;
    // As over HTTP: the session cache answers while its check stands; a change to the user's sessions (any
    // instance) drops it at once (user_auth_changed) and makes the next frame ask the database.
    await this.judge([connection], await this.checkedSessions.resolve(connection.user.id, connection.user.sessionId));
    return connection.open;
  }

  /** Subscribes a connection to a bus channel for as long as it is open. */
  async listen(connection: GatewayConnection, channel: string, listener: (message: string) => void, onStop?: () => void): Promise<void> {
    if (connection.listeners.has(channel)) return;
    connection.listeners.set(channel, listener);
    if (onStop) connection.stoppers.set(channel, onStop);
    await this.bus.listen(channel, listener);
  }

  async unlisten(connection: GatewayConnection, channel: string): Promise<boolean> {
    const listener = connection.listeners.get(channel);
    if (!listener) return false;
    connection.listeners.delete(channel);
    connection.stoppers.get(channel)?.();
    connection.stoppers.delete(channel);
    await this.bus.unlisten(channel, listener);
    return true;
  }

  /** Publishes `presence.updated` to the user's mutual contacts, naming the user by each one's own contact id, and to the user's own sessions. */
  async announce(userId: string, status: PresenceState, mutual?: MutualLink[]): Promise<void> {
    const at = new Date().toISOString();
    const publish = (to: string, data: Record<string, unknown>) =>
      this.bus.publish(userChannel(this.config.redisPrefix, to), { type: 'presence.updated', data } satisfies BusEvent);
    const links = mutual ?? (await this.contacts.mutualLinks(userId));
    await Promise.all([
      ...links.map((link) => publish(link.userId, { contact_id: link.theirContactId, status, at })),
      publish(userId, { user_id: userId, status, at }),
    ]);
  }

  /** Closes every socket with 1001 so clients reconnect to another instance, then waits for their cleanup. */
  async beforeApplicationShutdown(): Promise<void> {
    this.draining = true;
    this.wheel.stop();
    this.stopWatching?.();
    const closed = [...this.connections].map(
      (connection) =>
        new Promise<void>((resolve) => {
          if (connection.socket.readyState === WebSocket.CLOSED) return resolve();
          connection.socket.once('close', () => resolve());
          connection.close(CLOSE.GOING_AWAY, 'server shutting down');
        }),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(closed), new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)))]);
    clearTimeout(timer);
    for (const connection of this.connections) connection.socket.terminate();
    await Promise.all([...this.releasing]);
    await this.presence.retireInstance().catch(() => undefined);
  }

  /** One bus event for this connection's user. */
  private deliver(connection: GatewayConnection, message: string): void {
    if (connection.hold(message)) return;
    const event = JSON.parse(message) as BusEvent;
    if (event.type === 'message.created') {
      const messageId = String(event.data.id);
      if (!connection.firstSight(messageId)) return;
      connection.send(event);
      if (event.data.direction === 'inbound' && connection.open) void this.acknowledgeDelivery(connection.user.id, messageId);
      return;
    }
    connection.send(event);
  }

  /** First delivery to any socket of the recipient marks the message delivered and tells the sender. */
  private async acknowledgeDelivery(userId: string, messageId: string): Promise<void> {
    try {
      const receipt = await this.receipts.markDelivered(userId, messageId);
      if (!receipt) return;
      await this.bus.publish(userChannel(this.config.redisPrefix, receipt.sender_id), {
        type: 'message.delivered',
        data: { message_id: messageId, contact_id: receipt.contact_id, delivered_at: receipt.at },
      } satisfies BusEvent);
    } catch (error) {
      this.logger.warn({ err: error, messageId }, 'delivery receipt failed');
    }
  }

  /** `session.expiring` ahead of the token's expiry, then close 4401 at expiry so the client reconnects with a fresh token. */
  private scheduleExpiry(connection: GatewayConnection): void {
    const untilExpiry = connection.expiresAt.getTime() - Date.now();
    const untilNotice = untilExpiry - this.config.gateway.expiryNoticeSeconds * 1000;
    const notice = () => connection.send({ type: 'session.expiring', data: { expires_at: connection.expiresAt.toISOString() } });
    if (untilNotice <= 0) notice();
    else connection.timers.push(setTimeout(notice, untilNotice));
    connection.timers.push(setTimeout(() => connection.close(CLOSE.INVALID_TOKEN, 'token expired'), Math.max(untilExpiry, 0)));
    for (const timer of connection.timers) timer.unref();
  }

  /** A user's sessions, tier, profile or soul changed (`userId`), or any may have changed unannounced (null). */
  private sessionsChanged(userId: string | null): void {
    this.changesSeen += 1;
    if (userId === null) return void this.queueRecheck([...this.byUser.values()].flatMap((set) => [...set]));
    const local = this.byUser.get(userId);
    // Synchronously: from this moment no bus message reaches these sockets until their sessions are re-checked.
    if (local) void this.recheck([...local]);
  }

  /**
   * Re-checks the sessions of these connections (one lookup per session) and
   * closes those that no longer stand; bus messages for them are held
   * meanwhile and delivered after, to those still open. A failed lookup (the
   * database unavailable) is an outage, not a revocation: the sockets stay.
   */
  private async recheck(connections: GatewayConnection[]): Promise<void> {
    const bySession = new Map<string, GatewayConnection[]>();
    for (const connection of connections) {
      connection.beginCheck();
      const key = `${connection.user.id}/${connection.user.sessionId}`;
      bySession.set(key, [...(bySession.get(key) ?? []), connection]);
    }
    await Promise.all(
      [...bySession.values()].map(async (group) => {
        const { id, sessionId } = group[0].user;
        try {
          await this.judge(group, await this.checkedSessions.resolve(id, sessionId));
        } catch (error) {
          this.logger.warn(`session re-check failed: ${(error as Error).message}`);
        } finally {
          for (const connection of group) for (const message of connection.endCheck()) this.deliver(connection, message);
        }
      }),
    );
  }

  /** Applies a fresh session check (`current`, null when the session no longer stands) to connections of that one session. */
  private async judge(group: GatewayConnection[], current: AuthenticatedUser | null): Promise<void> {
    if (!current) {
      const exists = await this.users.stillExists(group[0].user.id);
      for (const connection of group)
        connection.close(exists ? CLOSE.INVALID_TOKEN : CLOSE.USER_DELETED, exists ? 'session revoked' : 'user deleted');
      return;
    }
    for (const connection of group) {
      const soulId = connection.user.profile.soulId;
      // State set up for the socket (subscriptions, caches in clients) may stem from the deleted record: start afresh.
      if (soulId !== null && current.profile.soulId !== soulId) connection.close(CLOSE.SOUL_DELETED, 'soul deleted');
      else connection.user = current;
    }
  }

  /**
   * Queues connections for a session re-check, done a few users at a time in
   * queue order: every connection when the notification listener (re)starts,
   * and each slot's connections at their heartbeat while it is down (so changes
   * still end sockets, at heartbeat pace, and the lookups restart the
   * listener). A queued connection is checked once however often it is queued
   * meanwhile; one queued again while its check runs is checked again after.
   */
  private queueRecheck(connections: Iterable<GatewayConnection>): void {
    for (const connection of connections) this.recheckQueue.add(connection);
    if (!this.rechecking && this.recheckQueue.size > 0) void this.drainRechecks();
  }

  private async drainRechecks(): Promise<void> {
    this.rechecking = true;
    try {
      while (this.recheckQueue.size > 0) {
        const users = new Set<string>();
        const batch: GatewayConnection[] = [];
        for (const connection of this.recheckQueue) {
          if (!users.has(connection.user.id)) {
            if (users.size === SWEEP_USERS_AT_ONCE) break;
            users.add(connection.user.id);
          }
          batch.push(connection);
        }
        for (const connection of batch) this.recheckQueue.delete(connection);
        await this.recheck(batch.filter((connection) => this.connections.has(connection))).catch((error: unknown) =>
          this.logger.warn(`session re-check failed: ${(error as Error).message}`),
        );
      }
    } finally {
      this.rechecking = false;
    }
  }

  /**
   * The heartbeat of one slot of connections (the wheel visits each slot once a
   * period, at its own phase): drops those silent for two intervals, pings the
   * rest and refreshes their presence in one pipeline, records their users in
   * the instance registry (which also marks this instance alive); once a period
   * (slot 0) looks for crashed instances.
   */
  private beat(connections: GatewayConnection[], slot: number): void {
    const silentAfter = Date.now() - 2 * this.config.gateway.heartbeatMs;
    const live: GatewayConnection[] = [];
    for (const connection of connections) {
      if (connection.lastSeen < silentAfter) {
        // No close handshake with a client that does not answer: terminate, and presence follows on 'close'.
        connection.socket.terminate();
        continue;
      }
      if (connection.open) connection.socket.ping();
      live.push(connection);
    }
    void this.watchInstances(
      live.map((connection) => connection.user.id),
      slot === 0,
    );
    if (live.length > 0)
      this.presence
        .refresh(live.map((connection) => ({ userId: connection.user.id, connectionId: connection.id })))
        .catch((error: unknown) => this.logger.warn(`presence refresh failed: ${(error as Error).message}`));
    if (!this.checkedSessions.remembering && live.length > 0) this.queueRecheck(live);
  }

  private async watchInstances(userIds: string[], reap: boolean): Promise<void> {
    try {
      await this.presence.heartbeatInstance(new Set(userIds));
      if (reap) for (const userId of await this.presence.reapDeadInstances()) await this.announce(userId, 'offline');
    } catch (error) {
      this.logger.warn(`instance heartbeat failed: ${(error as Error).message}`);
    }
  }

  private release(connection: GatewayConnection): void {
    if (!this.connections.delete(connection)) return;
    this.wheel.remove(connection);
    this.recheckQueue.delete(connection);
    const mine = this.byUser.get(connection.user.id);
    mine?.delete(connection);
    if (mine?.size === 0) this.byUser.delete(connection.user.id);
    for (const timer of connection.timers) clearTimeout(timer);
    const done = (async () => {
      for (const channel of [...connection.listeners.keys()]) await this.unlisten(connection, channel);
      if (await this.presence.leave(connection.user.id, connection.id)) await this.announce(connection.user.id, 'offline');
    })()
      .catch((error: unknown) => this.logger.warn(`connection cleanup failed: ${(error as Error).message}`))
      .finally(() => this.releasing.delete(done));
    this.releasing.add(done);
  }
}
