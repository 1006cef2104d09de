import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Tx } from '../../infra/database/sql-repository';
import { ProblemError } from '../../common/errors/problem-error';
import { isId, newId } from '../../common/ids';
import { AppsService } from '../providers/apps.service';
import { PlatformPrincipal } from '../providers/auth/platform-principal';
import { DEFAULT_DELIVERY_PAGE, DeliveryListQuery, WebhookEventType } from './dto/webhook.dto';
import { JobOutbox } from '../../infra/queue/job-outbox';
import { drainJobs, WebhookDeliveryQueue } from './webhook-delivery.queue';
import { EndpointRecord, WebhookEndpointsRepository } from './webhook-endpoints.repository';
import { sampleData } from './sample-events';
import { DeliveryRow, WebhookDeliveriesRepository } from './webhook-deliveries.repository';

export type { DeliveryRow } from './webhook-deliveries.repository';

export interface EnvelopeInput {
  eventId: string;
  type: string;
  createdAt: Date;
  appId: string;
  data: Record<string, unknown>;
}

/**
 * The envelope exactly as the spec lists it, serialised once: these bytes are
 * stored, signed and sent on every attempt and replay.
 */
export function envelope(input: EnvelopeInput): { body: string; idempotencyKey: string } {
  // Stable per event and app, so retries and replays carry the same key.
  const idempotencyKey = `${input.eventId}.${input.appId}`;
  const body = JSON.stringify({
    id: input.eventId,
    type: input.type,
    created_at: input.createdAt.toISOString(),
    app_id: input.appId,
    idempotency_key: idempotencyKey,
    data: input.data,
  });
  return { body, idempotencyKey };
}

/**
 * Delivery rows of every endpoint: creation, the delivery log, replay, test
 * events and recovery after an outage. The app-level routes (`/webhook/…`,
 * the spec's profile) list, test and recover the app's primary endpoint and
 * read or replay any delivery of the app by id; the endpoint routes name
 * their endpoint (`endpointId`).
 */
@Injectable()
export class WebhookDeliveries {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly endpoints: WebhookEndpointsRepository,
    private readonly apps: AppsService,
    private readonly queue: WebhookDeliveryQueue,
    private readonly jobs: JobOutbox,
  ) {}

  /**
   * Writes a pending delivery to an endpoint (or, for a disabled one, a failed
   * one that `recover` can re-send later). Null when this event already has
   * its delivery for the endpoint: fan-out may run again after a crash.
   */
  async create(
    manager: Tx,
    endpointId: string,
    input: EnvelopeInput,
    options: { test?: boolean; replayOf?: string; disabled?: boolean } = {},
  ): Promise<DeliveryRow | null> {
    const { body, idempotencyKey } = envelope(input);
    return this.deliveries.insert(manager, {
      id: newId('dlv'),
      appId: input.appId,
      endpointId,
      eventId: input.eventId,
      type: input.type,
      idempotencyKey,
      body,
      test: options.test ?? false,
      replayOf: options.replayOf ?? null,
      disabled: options.disabled === true,
      // Test events carry sample data naming no real package.
      packageId: null,
    });
  }

  /** A page of an endpoint's delivery log (the primary one's when `endpointId` is null). */
  async list(principal: PlatformPrincipal, appId: string, endpointId: string | null, query: DeliveryListQuery) {
    const limit = query.limit ?? DEFAULT_DELIVERY_PAGE;
    const cursor = query.cursor ? decodeCursor(query.cursor) : null;
    const endpoint = await this.endpoint(principal, appId, endpointId, { primaryOptional: true });
    if (!endpoint) return { deliveries: [], next_cursor: null };
    const rows = await this.deliveries.page(
      endpoint.id,
      {
        status: query.status ?? null,
        eventType: query.event_type ?? null,
        packageId: query.package_id ?? null,
        since: query.since ?? null,
        until: query.until ?? null,
        after: cursor,
      },
      limit + 1,
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      deliveries: page.map(toSummary),
      next_cursor: rows.length > limit && last ? encodeCursor(last) : null,
    };
  }

  async get(principal: PlatformPrincipal, appId: string, endpointId: string | null, deliveryId: string) {
    const row = await this.owned(principal, appId, endpointId, deliveryId);
    const attempts = await this.deliveries.attemptsOf(row.id);
    return {
      ...toSummary(row),
      payload: JSON.parse(row.body) as unknown,
      attempts: attempts.map((a) => ({
        attempt: a.attempt,
        started_at: a.started_at.toISOString(),
        request_headers: a.request_headers,
        status_code: a.status_code,
        latency_ms: a.latency_ms,
        response_body: a.response_body,
        error_class: a.error_class,
        outcome: a.outcome,
      })),
    };
  }

  /** A new attempt chain to the same endpoint with the same event id, idempotency key and body bytes. */
  async replay(principal: PlatformPrincipal, appId: string, endpointId: string | null, deliveryId: string) {
    const original = await this.owned(principal, appId, endpointId, deliveryId);
    if (original.status === 'pending')
      throw new ProblemError('conflict', `Delivery ${deliveryId} is still pending; replay it once it is delivered or failed`);
    const row = await this.dataSource.transaction(async (manager) => {
      const replayed = await this.replayRow(manager, original);
      await this.jobs.record(manager, drainJobs([original.endpoint_id]));
      return replayed;
    });
    return toSummary(row);
  }

  /** A signed test event of `type` with sample data, delivered to one endpoint like any other. */
  async sendTest(principal: PlatformPrincipal, appId: string, endpointId: string | null, type: WebhookEventType) {
    const endpoint = (await this.endpoint(principal, appId, endpointId))!;
    if (!endpoint.target_url) throw noProfile(appId);
    const row = await this.dataSource.transaction(async (manager) => {
      const created = await this.create(
        manager,
        endpoint.id,
        { eventId: newId('evt'), type, createdAt: new Date(), appId, data: sampleData(type, appId) },
        { test: true },
      );
      await this.jobs.record(manager, drainJobs([endpoint.id]));
      return created!;
    });
    return toSummary(row);
  }

  async requestRecover(principal: PlatformPrincipal, appId: string, endpointId: string | null, since: string) {
    const endpoint = (await this.endpoint(principal, appId, endpointId))!;
    const jobId = await this.queue.requestRecover(appId, endpoint.id, new Date(since));
    return { job_id: jobId, status: 'queued' as const, since: new Date(since).toISOString() };
  }

  /**
   * Worker side of recover: a replay for every failed delivery of the endpoint
   * since `since` that is the latest chain of its event (running it twice
   * re-sends nothing twice).
   */
  async recover(endpointId: string, since: Date): Promise<number> {
    const failed = await this.deliveries.latestFailedSince(endpointId, since);
    await this.dataSource.transaction(async (manager) => {
      for (const original of failed) await this.replayRow(manager, original);
      if (failed.length > 0) await this.jobs.record(manager, drainJobs([endpointId]));
    });
    return failed.length;
  }

  /** A new pending chain for the same event, in the caller's transaction (which also queues a drain of the endpoint). */
  private async replayRow(manager: Tx, original: DeliveryRow): Promise<DeliveryRow> {
    return this.deliveries.insertReplay(manager, newId('dlv'), original);
  }

  /**
   * The endpoint a route acts on, once the principal may act on the app: the
   * named one (404 when the app has none of that id), or the primary one.
   * Without a primary endpoint that is 404 too, unless `primaryOptional`.
   */
  private async endpoint(
    principal: PlatformPrincipal,
    appId: string,
    endpointId: string | null,
    options: { primaryOptional?: boolean } = {},
  ): Promise<EndpointRecord | null> {
    await this.apps.owned(principal, appId);
    if (endpointId === null) {
      const primary = await this.endpoints.findPrimary(appId);
      if (!primary && !options.primaryOptional) throw noProfile(appId);
      return primary;
    }
    const endpoint = isId(endpointId, 'whe') ? await this.endpoints.find(appId, endpointId) : null;
    if (!endpoint) throw new ProblemError('not_found', `No webhook endpoint ${endpointId} for app ${appId}`);
    return endpoint;
  }

  /**
   * A delivery the principal may see: one of the named endpoint's, or (through
   * the app-level routes) any of the app's, whichever endpoint it went to.
   */
  private async owned(principal: PlatformPrincipal, appId: string, endpointId: string | null, deliveryId: string): Promise<DeliveryRow> {
    let row: DeliveryRow | null = null;
    if (endpointId === null) {
      await this.apps.owned(principal, appId);
      if (isId(deliveryId, 'dlv')) row = await this.deliveries.findForApp(deliveryId, appId);
    } else {
      const endpoint = (await this.endpoint(principal, appId, endpointId))!;
      if (isId(deliveryId, 'dlv')) row = await this.deliveries.findForEndpoint(deliveryId, endpoint.id);
    }
    if (!row) throw new ProblemError('not_found', `No delivery ${deliveryId} for app ${appId}`);
    return row;
  }
}

function noProfile(appId: string): ProblemError {
  return new ProblemError('not_found', `App ${appId} has no webhook profile yet; create one with PUT`);
}

export function toSummary(row: DeliveryRow) {
  return {
    id: row.id,
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    idempotency_key: row.idempotency_key,
    status: row.status,
    attempt_count: row.attempt_count,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    replay_of: row.replay_of,
    test: row.test,
    package_id: row.package_id,
    delivered_at: row.delivered_at?.toISOString() ?? null,
    failed_at: row.failed_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

function encodeCursor(row: DeliveryRow): string {
  return Buffer.from(JSON.stringify([row.created_at.toISOString(), row.id])).toString('base64url');
}

function decodeCursor(cursor: string): { at: string; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    if (typeof at !== 'string' || typeof id !== 'string' || Number.isNaN(Date.parse(at))) throw new Error('bad cursor');
    return { at, id };
  } catch {
    throw new ProblemError('invalid_format', 'cursor is not one this service issued', { field: 'cursor' });
  }
}
