import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { AccessTokens, InvalidAccessToken } from '../auth/access-tokens';
import type { UserTier } from '../auth/entities/user.entity';
import { Sessions } from '../auth/sessions.service';
import { UsersService } from '../auth/users.service';
import { ContactsService } from '../contacts/contacts.service';
import { MessageReceipts } from '../messages/message-receipts.service';
import { GatewayBus } from './gateway-bus';
import { BusEvent, userChannel } from './gateway-channels';
import { GatewayConnection } from './gateway-connection';
import { CLOSE } from './gateway-protocol';
import { Presence, PresenceState } from './presence.service';

/** Simultaneous connections of one user across all instances, per tier; one more is closed with 4429. */
export const CONNECTION_LIMITS: Record<UserTier, number> = { free: 5, pro: 20, enterprise: 100 };
/** How long shutdown waits for clients to answer the 1001 close before cutting them off. */
const CLOSE_GRACE_MS = 2000;

/**
 * The sockets of this api instance: authentication at connect, heartbeats,
 * token expiry, presence and delivery of bus events to local sockets.
 */
@Injectable()
export class GatewayConnections implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('Gateway');
  private readonly connections = new Set<GatewayConnection>();
  private readonly releasing = new Set<Promise<void>>();
  private heartbeat: NodeJS.Timeout | null = null;
  private draining = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tokens: AccessTokens,
    private readonly sessions: Sessions,
    private readonly users: UsersService,
    private readonly contacts: ContactsService,
    private readonly receipts: MessageReceipts,
    private readonly presence: Presence,
    private readonly bus: GatewayBus,
  ) {}

  onModuleInit(): void {
    this.heartbeat = setInterval(() => this.beat(), this.config.gateway.heartbeatMs);
    this.heartbeat.unref();
  }

  get size(): number {
    return this.connections.size;
  }

  /**
   * Verifies the `token` query parameter like a bearer token and, on success,
   * registers the socket and sends `ready`. Failures close the socket: 4401
   * for a missing, invalid or expired token or an ended session, 4403 when the
   * user no longer exists, 4429 over the tier's connection limit.
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
    const user = await this.sessions.resolve(claims.sub, claims.sid);
    if (!user) {
      const exists = (await this.users.profile(claims.sub)) !== null;
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
    socket.on('close', () => this.release(connection));
    socket.on('pong', () => (connection.lastSeen = Date.now()));
    socket.on('error', () => undefined);
    await this.listen(connection, userChannel(this.config.redisPrefix, user.id), (message) => this.deliver(connection, message));
    await this.presence.heartbeatInstance([user.id]);
    const cameOnline = await this.presence.touch(user.id, connection.id);
    const contactIds = await this.contacts.mutualLinkedUserIds(user.id);
    const states = await this.presence.stateOf(contactIds);
    if (!this.connections.has(connection)) {
      // Closed while we were setting it up: undo what release() could not see yet.
      for (const channel of [...connection.listeners.keys()]) await this.unlisten(connection, channel);
      await this.presence.leave(user.id, connection.id);
      return null;
    }
    connection.send({
      type: 'ready',
      data: {
        user: { id: user.id, tier: user.tier },
        session_id: user.sessionId,
        connection_id: connection.id,
        heartbeat_ms: this.config.gateway.heartbeatMs,
        expires_at: connection.expiresAt.toISOString(),
        presence: contactIds.map((id, i) => ({ user_id: id, status: states[i] })),
      },
    });
    this.scheduleExpiry(connection);
    // Not awaited: the caller must get the connection before any I/O runs, or frames sent right after `ready` would wait.
    if (cameOnline)
      void this.announce(user.id, 'online', contactIds).catch((error: unknown) =>
        this.logger.warn(`presence announcement failed: ${(error as Error).message}`),
      );
    return connection;
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

  /** Publishes `presence.updated` to the user's mutual contacts and the user's own sessions. */
  async announce(userId: string, status: PresenceState, contactIds?: string[]): Promise<void> {
    const audience = [...(contactIds ?? (await this.contacts.mutualLinkedUserIds(userId))), userId];
    const event: BusEvent = { type: 'presence.updated', data: { user_id: userId, status, at: new Date().toISOString() } };
    await Promise.all(audience.map((id) => this.bus.publish(userChannel(this.config.redisPrefix, id), event)));
  }

  /** Closes every socket with 1001 so clients reconnect to another instance, then waits for their cleanup. */
  async beforeApplicationShutdown(): Promise<void> {
    this.draining = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
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
    const event = JSON.parse(message) as BusEvent;
    if (event.type === 'message.created') {
      const messageId = String(event.data.id);
      if (connection.sentItself(messageId)) return;
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
        data: { message_id: messageId, recipient_user_id: userId, delivered_at: receipt.at },
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

  /** Pings every socket, drops those silent for two intervals, refreshes presence of the rest, and looks for crashed instances. */
  private beat(): void {
    void this.watchInstances();
    const silentAfter = Date.now() - 2 * this.config.gateway.heartbeatMs;
    for (const connection of this.connections) {
      if (connection.lastSeen < silentAfter) {
        // No close handshake with a client that does not answer: terminate, and presence follows on 'close'.
        connection.socket.terminate();
        continue;
      }
      if (connection.open) connection.socket.ping();
      this.presence.touch(connection.user.id, connection.id).catch((error: unknown) => {
        this.logger.warn(`presence refresh failed: ${(error as Error).message}`);
      });
    }
  }

  private async watchInstances(): Promise<void> {
    try {
      await this.presence.heartbeatInstance(new Set([...this.connections].map((c) => c.user.id)));
      for (const userId of await this.presence.reapDeadInstances()) await this.announce(userId, 'offline');
    } catch (error) {
      this.logger.warn(`instance heartbeat failed: ${(error as Error).message}`);
    }
  }

  private release(connection: GatewayConnection): void {
    if (!this.connections.delete(connection)) return;
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
