import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { ApiError } from '../../common/errors/api-error';
import { isDependencyUnavailable } from '../../common/errors/error.filter';
import { ProblemError } from '../../common/errors/problem-error';
import { ExecutionTarget } from '../marketplace/installs.service';
import { CapabilityDescriptor } from '@soul-service/rules';
import { RealtimeSubscriptions } from '../runtime-bridge/realtime-subscriptions.service';
import { RequestValidationError } from '../../common/errors/request-validation.error';
import { isId } from '../../common/ids';
import { RateLimits } from '../../common/rate-limit/rate-limits.service';
import { ContactsService } from '../contacts/contacts.service';
import { GroupsService } from '../contacts/groups.service';
import { InstallsService } from '../marketplace/installs.service';
import { SendMessageDto } from '../messages/dto/message.dto';
import { MessageReceipts } from '../messages/message-receipts.service';
import { MessagesService } from '../messages/messages.service';
import { PackagesService } from '../packages/packages.service';
import { GatewayBus } from '../../infra/realtime/gateway-bus';
import { BusEvent, capabilityChannel, userChannel } from '../../infra/realtime/gateway-channels';
import { GatewayConnection } from './gateway-connection';
import { GatewayConnections } from './gateway-connections.service';
import { ClientFrame, parseFrame, PRESENCE_STATUSES, PresenceStatus, requireString } from './gateway-protocol';
import { Presence } from './presence.service';

const MAX_READ_IDS = 100;
const MAX_CAPABILITY_SUBSCRIPTIONS = 20;
const SYNC_LIMIT = 500;
const CAPABILITY_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * Client → server events. Each handler applies the same rules as the HTTP
 * API (message.send goes through MessagesService.send and the per-user rate
 * limit); problems are answered with an `error` event and never close the socket.
 */
@Injectable()
export class GatewayFrames {
  private readonly logger = new Logger('Gateway');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly connections: GatewayConnections,
    private readonly messages: MessagesService,
    private readonly receipts: MessageReceipts,
    private readonly contacts: ContactsService,
    private readonly groups: GroupsService,
    private readonly installs: InstallsService,
    private readonly packages: PackagesService,
    private readonly presence: Presence,
    private readonly bus: GatewayBus,
    private readonly limits: RateLimits,
    private readonly realtime: RealtimeSubscriptions,
  ) {}

  async handle(connection: GatewayConnection, raw: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): Promise<void> {
    connection.lastSeen = Date.now();
    if (isBinary) return connection.error('BAD_REQUEST', 'Only text frames carrying JSON are accepted');
    const text = Array.isArray(raw) ? Buffer.concat(raw).toString('utf8') : Buffer.from(raw as ArrayBuffer).toString('utf8');
    const parsed = parseFrame(text);
    if (!parsed.frame) return connection.fail(parsed.error!, parsed.id);
    const frame = parsed.frame;
    try {
      await this.dispatch(connection, frame);
    } catch (error) {
      if (error instanceof ApiError) return connection.fail(error, frame.id);
      if (error instanceof RequestValidationError) return connection.error('BAD_REQUEST', error.message, frame.id);
      // The database away or its pool exhausted under load: retryable, as the HTTP routes answer it (503).
      if (isDependencyUnavailable(error)) {
        this.logger.warn({ err: error, type: frame.type }, 'gateway frame refused: a dependency is unavailable');
        return connection.error('SERVICE_UNAVAILABLE', 'The service is busy or a dependency is unavailable; try again shortly', frame.id);
      }
      this.logger.error({ err: error, type: frame.type }, 'gateway frame failed');
      connection.error('INTERNAL_ERROR', 'Something went wrong; try again', frame.id);
    }
  }

  private async dispatch(connection: GatewayConnection, frame: ClientFrame): Promise<void> {
    switch (frame.type) {
      case 'ping':
        return connection.send({ type: 'pong', ...(frame.id ? { id: frame.id } : {}), data: { at: new Date().toISOString() } });
      case 'message.send':
        return this.sendMessage(connection, frame);
      case 'message.read':
        return this.markRead(connection, frame);
      case 'typing':
        return this.typing(connection, frame);
      case 'presence.set':
        return this.setPresence(connection, frame);
      case 'capability.subscribe':
        return this.subscribeCapability(connection, frame);
      case 'capability.unsubscribe':
        return this.unsubscribeCapability(connection, frame);
      case 'sync':
        return this.sync(connection, frame);
    }
  }

  private ack(connection: GatewayConnection, frame: ClientFrame, data: Record<string, unknown>): void {
    if (frame.id !== undefined) connection.send({ type: 'ack', id: frame.id, data });
  }

  /** Same validation, rate limit, idempotency and result as `POST /v1/messages`. */
  private async sendMessage(connection: GatewayConnection, frame: ClientFrame): Promise<void> {
    const { idempotency_key: key, ...body } = frame.data;
    if (key !== undefined && typeof key !== 'string') throw new ApiError('BAD_REQUEST', 'idempotency_key must be a string');
    const dto = plainToInstance(SendMessageDto, body);
    const problems = await validate(dto, { whitelist: true, forbidNonWhitelisted: true });
    if (problems.length > 0) throw RequestValidationError.fromClassValidator(problems);
    const decision = await this.limits.consumeForUser(connection.user.id, connection.user.tier);
    if (!decision.allowed)
      throw new ApiError('RATE_LIMITED', `Rate limit of ${decision.limit} requests exceeded; retry in ${decision.retryAfter} s`);
    // This socket gets the ack, not the fast path's copy of its own message.
    const outcome = await this.messages.send(connection.user.id, dto, key, { beforePublish: (id) => connection.firstSight(id) });
    if (frame.id !== undefined)
      connection.send({ type: 'ack', id: frame.id, data: { ...outcome.body }, ...(outcome.replayed ? { replayed: true } : {}) });
  }

  private async markRead(connection: GatewayConnection, frame: ClientFrame): Promise<void> {
    const ids = frame.data.message_ids;
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_READ_IDS || !ids.every((id) => isId(String(id), 'msg')))
      throw new ApiError('BAD_REQUEST', `message_ids must be 1 to ${MAX_READ_IDS} message ids (msg_…)`);
    const receipts = await this.receipts.markRead(connection.user.id, ids as string[]);
    await Promise.all(
      receipts.map((receipt) =>
        this.bus.publish(userChannel(this.config.redisPrefix, receipt.sender_id), {
          type: 'message.read',
          data: { message_id: receipt.message_id, contact_id: receipt.contact_id, read_at: receipt.at },
        } satisfies BusEvent),
      ),
    );
    this.ack(connection, frame, { read: receipts.map((r) => r.message_id) });
  }

  /**
   * Typing indicators go to the linked users of a contact, or of every member
   * of a group, who have added the typist back: each is told which of their
   * contacts is typing. The ack counts only them, so it says no more than `connected`.
   */
  private async typing(connection: GatewayConnection, frame: ClientFrame): Promise<void> {
    const recipientId = requireString(frame.data, 'recipient_id');
    const state = frame.data.state ?? 'started';
    if (state !== 'started' && state !== 'stopped') throw new ApiError('BAD_REQUEST', 'state must be one of: started, stopped');
    const userId = connection.user.id;
    const recipients = isId(recipientId, 'grp')
      ? await this.groups.findRecipients(userId, recipientId)
      : await this.contacts.findRecipient(userId, recipientId).then((r) => (r ? [r] : null));
    if (!recipients) throw new ApiError('NOT_FOUND', `No contact or group ${recipientId}`);
    const linked = [...new Set(recipients.flatMap((r) => (r.linkedUserId && r.linkedUserId !== userId ? [r.linkedUserId] : [])))];
    const targets = await this.contacts.contactIdsFor(linked, userId);
    const recipientKind = isId(recipientId, 'grp') ? 'group' : 'contact';
    await Promise.all(
      [...targets].map(([targetId, contactId]) =>
        this.bus.publish(userChannel(this.config.redisPrefix, targetId), {
          type: 'typing',
          data: { contact_id: contactId, recipient_kind: recipientKind, state },
        } satisfies BusEvent),
      ),
    );
    this.ack(connection, frame, { recipients: targets.size });
  }

  private async setPresence(connection: GatewayConnection, frame: ClientFrame): Promise<void> {
    const status = frame.data.status;
    if (!PRESENCE_STATUSES.includes(status as PresenceStatus))
      throw new ApiError('BAD_REQUEST', `status must be one of: ${PRESENCE_STATUSES.join(', ')}`);
    await this.presence.setStatus(connection.user.id, status as PresenceStatus);
    await this.connections.announce(connection.user.id, status as PresenceStatus);
    this.ack(connection, frame, { status });
  }

  /**
   * Relays `${REDIS_PREFIX}:capability:<install_id>:<capability>` (published by
   * the runtime bridge) to this socket. Only realtime capabilities of the user's own active installs.
   */
  private async subscribeCapability(connection: GatewayConnection, frame: ClientFrame): Promise<void> {
    const installId = requireString(frame.data, 'install_id');
    const capability = requireString(frame.data, 'capability');
    if (!CAPABILITY_NAME.test(capability)) throw new ApiError('BAD_REQUEST', 'capability must be a capability name');
    const channel = capabilityChannel(this.config.redisPrefix, installId, capability);
    if (!connection.listeners.has(channel)) {
      const subscriptions = [...connection.listeners.keys()].filter((c) => c.includes(':capability:')).length;
      if (subscriptions >= MAX_CAPABILITY_SUBSCRIPTIONS)
        throw new ApiError('BAD_REQUEST', `At most ${MAX_CAPABILITY_SUBSCRIPTIONS} capability subscriptions per connection`);
      const active = await this.dataSource.transaction((manager) => this.installs.activeFor(manager, connection.user.id));
      const install = active.find((row) => row.id === installId);
      if (!install) throw new ApiError('NOT_FOUND', `No active install ${installId}`);
      const version = await this.packages.version(install.package_id, install.version_id);
      const descriptor = version.capabilities.find((c) => c.name === capability && c.type === 'realtime');
      if (!descriptor) throw new ApiError('NOT_FOUND', `Install ${installId} has no realtime capability ${capability}`);
      // Ask the runtime bridge for the stream (the worker's supervisor opens it) and keep the lease alive while listening.
      const target = await this.installs.executionTarget({ installId });
      if (!target) throw new ApiError('NOT_FOUND', `No active install ${installId}`);
      const lease = await this.openStream(target, descriptor);
      const renewal = setInterval(() => void this.openStream(target, descriptor).catch(() => undefined), (lease.leaseSeconds * 1000) / 2);
      renewal.unref();
      await this.connections.listen(
        connection,
        channel,
        (message) => relayCapability(connection, installId, capability, message),
        () => clearInterval(renewal),
      );
    }
    this.ack(connection, frame, { install_id: installId, capability, subscribed: true });
  }

  private async openStream(target: ExecutionTarget, descriptor: CapabilityDescriptor) {
    try {
      return await this.realtime.subscribe(target, descriptor);
    } catch (error) {
      if (error instanceof ProblemError) throw new ApiError(error.status === 429 ? 'RATE_LIMITED' : 'BAD_REQUEST', error.detail);
      throw error;
    }
  }

  private async unsubscribeCapability(connection: GatewayConnection, frame: ClientFrame): Promise<void> {
    const installId = requireString(frame.data, 'install_id');
    const capability = requireString(frame.data, 'capability');
    await this.connections.unlisten(connection, capabilityChannel(this.config.redisPrefix, installId, capability));
    this.ack(connection, frame, { install_id: installId, capability, subscribed: false });
  }

  /**
   * Replays messages received after `since` as `message.created` (the client
   * drops ids it already has), then `sync.complete`. `more: true` means ask
   * again from `until`.
   */
  private async sync(connection: GatewayConnection, frame: ClientFrame): Promise<void> {
    const since = new Date(requireString(frame.data, 'since', 64));
    if (Number.isNaN(since.getTime())) throw new ApiError('BAD_REQUEST', 'since must be an ISO 8601 timestamp');
    const missed = await this.receipts.receivedSince(connection.user.id, since, SYNC_LIMIT);
    for (const message of missed) {
      connection.send({
        type: 'message.created',
        data: { ...message, direction: 'inbound', recipient_id: connection.user.id, replayed: true },
      });
      const receipt = await this.receipts.markDelivered(connection.user.id, message.id);
      if (receipt)
        await this.bus.publish(userChannel(this.config.redisPrefix, receipt.sender_id), {
          type: 'message.delivered',
          data: { message_id: message.id, contact_id: receipt.contact_id, delivered_at: receipt.at },
        } satisfies BusEvent);
    }
    const until = missed.length > 0 ? missed[missed.length - 1].created_at : since.toISOString();
    connection.send({
      type: 'sync.complete',
      ...(frame.id ? { id: frame.id } : {}),
      data: { count: missed.length, until, more: missed.length === SYNC_LIMIT },
    });
  }
}

/** The bridge publishes `{"type":"data","data":…}` or `{"type":"stale",…}`; anything else is treated as data. */
function relayCapability(connection: GatewayConnection, installId: string, capability: string, message: string): void {
  let payload: unknown;
  try {
    payload = JSON.parse(message);
  } catch {
    payload = message;
  }
  const record = typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>) : null;
  if (record?.type === 'stale') {
    const { type: _type, ...rest } = record;
    connection.send({ type: 'capability.stale', data: { install_id: installId, capability, ...rest } });
    return;
  }
  const data = record && record.type === 'data' && 'data' in record ? record.data : payload;
  connection.send({ type: 'capability.data', data: { install_id: installId, capability, data, at: new Date().toISOString() } });
}
