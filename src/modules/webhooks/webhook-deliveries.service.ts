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
import { WebhookProfiles } from './webhook-profiles.service';
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

/** Delivery rows: creation, the delivery log, replay, test events and recovery after an outage. */
@Injectable()
export class WebhookDeliveries {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly apps: AppsService,
    private readonly profiles: WebhookProfiles,
    private readonly queue: WebhookDeliveryQueue,
    private readonly jobs: JobOutbox,
  ) {}

  /**
   * Writes a pending delivery (or, for a disabled endpoint, a failed one that
   * `recover` can re-send later). Null when this event already has its
   * delivery for the app: fan-out may run again after a crash.
   */
  async create(
    manager: Tx,
    input: EnvelopeInput,
    options: { test?: boolean; replayOf?: string; disabled?: boolean } = {},
  ): Promise<DeliveryRow | null> {
    const { body, idempotencyKey } = envelope(input);
    return this.deliveries.insert(manager, {
      id: newId('dlv'),
      appId: input.appId,
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

  async list(principal: PlatformPrincipal, appId: string, query: DeliveryListQuery) {
    await this.apps.owned(principal, appId);
    const limit = query.limit ?? DEFAULT_DELIVERY_PAGE;
    const cursor = query.cursor ? decodeCursor(query.cursor) : null;
    const rows = await this.deliveries.page(
      appId,
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

  async get(principal: PlatformPrincipal, appId: string, deliveryId: string) {
    const row = await this.owned(principal, appId, deliveryId);
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

  /** A new attempt chain with the same event id, idempotency key and body bytes. */
  async replay(principal: PlatformPrincipal, appId: string, deliveryId: string) {
    const original = await this.owned(principal, appId, deliveryId);
    if (original.status === 'pending')
      throw new ProblemError('conflict', `Delivery ${deliveryId} is still pending; replay it once it is delivered or failed`);
    const row = await this.dataSource.transaction(async (manager) => {
      const replayed = await this.replayRow(manager, original);
      await this.jobs.record(manager, drainJobs([appId]));
      return replayed;
    });
    return toSummary(row);
  }

  /** A signed test event of `type` with sample data, delivered like any other. */
  async sendTest(principal: PlatformPrincipal, appId: string, type: WebhookEventType) {
    const app = await this.apps.owned(principal, appId);
    const profile = await this.profiles.find(appId);
    if (!profile || !app.webhook_url) throw new ProblemError('not_found', `App ${appId} has no webhook profile yet; create one with PUT`);
    const row = await this.dataSource.transaction(async (manager) => {
      const created = await this.create(
        manager,
        { eventId: newId('evt'), type, createdAt: new Date(), appId, data: sampleData(type, appId) },
        { test: true },
      );
      await this.jobs.record(manager, drainJobs([appId]));
      return created!;
    });
    return toSummary(row);
  }

  async requestRecover(principal: PlatformPrincipal, appId: string, since: string) {
    await this.apps.owned(principal, appId);
    const jobId = await this.queue.requestRecover(appId, new Date(since));
    return { job_id: jobId, status: 'queued' as const, since: new Date(since).toISOString() };
  }

  /**
   * Worker side of recover: a replay for every failed delivery since `since`
   * that is the latest chain of its event (running it twice re-sends nothing twice).
   */
  async recover(appId: string, since: Date): Promise<number> {
    const failed = await this.deliveries.latestFailedSince(appId, since);
    await this.dataSource.transaction(async (manager) => {
      for (const original of failed) await this.replayRow(manager, original);
      if (failed.length > 0) await this.jobs.record(manager, drainJobs([appId]));
    });
    return failed.length;
  }

  /** A new pending chain for the same event, in the caller's transaction (which also queues a drain of the endpoint). */
  private async replayRow(manager: Tx, original: DeliveryRow): Promise<DeliveryRow> {
    return this.deliveries.insertReplay(manager, newId('dlv'), original);
  }

  private async owned(principal: PlatformPrincipal, appId: string, deliveryId: string): Promise<DeliveryRow> {
    await this.apps.owned(principal, appId);
    const row = isId(deliveryId, 'dlv') ? await this.deliveries.findForApp(deliveryId, appId) : null;
    if (!row) throw new ProblemError('not_found', `No delivery ${deliveryId} for app ${appId}`);
    return row;
  }
}

function toSummary(row: DeliveryRow) {
  return {
    id: row.id,
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
