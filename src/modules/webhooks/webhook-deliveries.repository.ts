import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import { outboxInsertFrom } from '../../infra/queue/job-outbox';
import type { OutboxRow } from '../../infra/queue/job-outbox.repository';
import { DRAIN_JOB } from './webhook-delivery.queue';

/** A `webhook_deliveries` row, as the delivery log and the drain use it. */
export interface DeliveryRow {
  id: string;
  app_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  idempotency_key: string;
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  attempt_count: number;
  chain_started_at: Date;
  next_attempt_at: Date;
  last_status_code: number | null;
  last_error: string | null;
  replay_of: string | null;
  test: boolean;
  /** The package the event concerns (null: none, or a test event); see `WebhookFanOut`. */
  package_id: string | null;
  delivered_at: Date | null;
  failed_at: Date | null;
  created_at: Date;
}

/** A `webhook_attempts` row: one line of a delivery's attempt log. */
export interface AttemptRow {
  attempt: number;
  started_at: Date;
  request_headers: Record<string, string>;
  status_code: number | null;
  latency_ms: number;
  response_body: string | null;
  error_class: string | null;
  outcome: string;
}

/**
 * The drain's claim: up to $2 due deliveries of endpoint $1, oldest due first,
 * their next attempt number taken and leased for $3 seconds. The due index is
 * `(endpoint_id, next_attempt_at, id)`, the order asked for, so the claim reads
 * only the rows it takes. Without `id` in the index, every claim read and sorted
 * the endpoint's whole backlog, since a fan-out gives all its rows one due time.
 * Exported for the medium test that checks the plan.
 */
export const CLAIM_DUE_SQL = `WITH due AS (
    SELECT id FROM webhook_deliveries
     WHERE endpoint_id = $1 AND status = 'pending' AND next_attempt_at <= now() + interval '50 milliseconds'
     ORDER BY next_attempt_at, id
     LIMIT $2
     FOR UPDATE SKIP LOCKED
  ), claimed AS (
    UPDATE webhook_deliveries d
       SET attempt_count = d.attempt_count + 1, next_attempt_at = now() + make_interval(secs => $3), updated_at = now()
      FROM due WHERE d.id = due.id
    RETURNING d.id, d.event_id, d.event_type, d.body, d.attempt_count, d.chain_started_at, d.test, d.next_attempt_at
  )
  SELECT id, event_id, event_type, body, attempt_count, chain_started_at, test FROM claimed ORDER BY next_attempt_at, id`;

/** A claimed attempt: the delivery after its attempt number was taken. */
export type ClaimedDelivery = Pick<DeliveryRow, 'id' | 'event_id' | 'event_type' | 'body' | 'attempt_count' | 'chain_started_at' | 'test'>;

/** One attempt's outcome, waiting to be written with the others of its round. */
export interface AttemptRecord {
  deliveryId: string;
  outcome: 'delivered' | 'retry' | 'failed';
  code: number | null;
  error: string | null;
  nextAt: Date | null;
  logged: {
    attempt: number;
    startedAt: Date;
    headers: Record<string, string>;
    latencyMs: number;
    body: string | null;
    errorClass: string | null;
  };
  /** A 410 Gone: the endpoint is disabled at once. */
  gone: boolean;
}

/** A delivery to write: pending, or (for a disabled endpoint) failed with `endpoint_disabled` at once. */
export interface NewDelivery {
  id: string;
  appId: string;
  endpointId: string;
  eventId: string;
  type: string;
  idempotencyKey: string;
  body: string;
  test: boolean;
  replayOf: string | null;
  disabled: boolean;
  /** The package the event concerns, for the delivery log; null when it concerns none. */
  packageId: string | null;
}

/** Filters of the delivery log (null: any). */
export interface DeliveryLogFilter {
  status: string | null;
  eventType: string | null;
  packageId: string | null;
  since: string | null;
  until: string | null;
  /** The last row of the previous page. */
  after: { at: string; id: string } | null;
}

/**
 * The only reader and writer of `webhook_deliveries` and of its attempt log
 * `webhook_attempts`: a delivery and its attempts are one aggregate, and a
 * drain writes a batch of attempt lines and the deliveries' new states in one
 * statement (`recordOutcomes`), so both tables live behind one repository.
 * The drain's statements are set-based (bench/webhooks.bench.ts): one claim,
 * one write per batch, never a statement per delivery.
 */
@Injectable()
export class WebhookDeliveriesRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** Null when this event already has its delivery for the endpoint: fan-out may run again after a crash. */
  async insert(tx: Tx, delivery: NewDelivery): Promise<DeliveryRow | null> {
    return this.first<DeliveryRow>(
      `INSERT INTO webhook_deliveries (id, app_id, event_id, event_type, idempotency_key, body, test, replay_of, status, last_error, failed_at,
                                       package_id, endpoint_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, CASE WHEN $11 THEN now() END, $12, $13)
       ON CONFLICT (event_id, endpoint_id) WHERE replay_of IS NULL AND NOT test DO NOTHING
       RETURNING *`,
      [
        delivery.id,
        delivery.appId,
        delivery.eventId,
        delivery.type,
        delivery.idempotencyKey,
        delivery.body,
        delivery.test,
        delivery.replayOf,
        delivery.disabled ? 'failed' : 'pending',
        delivery.disabled ? 'endpoint_disabled' : null,
        delivery.disabled,
        delivery.packageId,
        delivery.endpointId,
      ],
      tx,
    );
  }

  /**
   * A fan-out batch in one statement: every delivery row and, for each endpoint in `drains` that got a pending
   * delivery in this statement, its drain job in the job outbox. An event already delivered to an endpoint is skipped.
   * Returns the drain jobs written, for the caller to relay after its commit (they wake no relay).
   */
  async insertFanOut(
    tx: Tx,
    deliveries: Array<Omit<NewDelivery, 'test' | 'replayOf'>>,
    drains: Array<{ jobId: string; endpointId: string }>,
  ): Promise<OutboxRow[]> {
    const jobs = outboxInsertFrom(
      DRAIN_JOB,
      {
        from: 'unnest($10::text[], $11::text[]) AS j(id, endpoint_id)',
        idColumn: 'j.id',
        dataSql: `jsonb_build_object('endpointId', j.endpoint_id)`,
        where: `EXISTS (SELECT 1 FROM written w WHERE w.endpoint_id = j.endpoint_id AND w.status = 'pending')`,
      },
      12,
      { writerRelays: true },
    );
    return this.prepared<OutboxRow>(
      'webhook_deliveries_fan_out',
      `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[], $8::text[], $9::text[])
                    AS t(id, app_id, event_id, event_type, idempotency_key, body, disabled, package_id, endpoint_id)
       ), written AS (
         INSERT INTO webhook_deliveries (id, app_id, endpoint_id, event_id, event_type, idempotency_key, body, status, last_error, failed_at,
                                         package_id)
         SELECT id, app_id, endpoint_id, event_id, event_type, idempotency_key, body,
                CASE WHEN disabled THEN 'failed' ELSE 'pending' END,
                CASE WHEN disabled THEN 'endpoint_disabled' END,
                CASE WHEN disabled THEN now() END,
                package_id
           FROM input
         ON CONFLICT (event_id, endpoint_id) WHERE replay_of IS NULL AND NOT test DO NOTHING
         RETURNING id, endpoint_id, status
       )
       ${jobs.sql}`,
      [
        deliveries.map((r) => r.id),
        deliveries.map((r) => r.appId),
        deliveries.map((r) => r.eventId),
        deliveries.map((r) => r.type),
        deliveries.map((r) => r.idempotencyKey),
        deliveries.map((r) => r.body),
        deliveries.map((r) => r.disabled),
        deliveries.map((r) => r.packageId),
        deliveries.map((r) => r.endpointId),
        drains.map((d) => d.jobId),
        drains.map((d) => d.endpointId),
        ...jobs.params,
      ],
      tx,
    );
  }

  /** A new pending chain for the same event (same event id, key and body bytes), in the caller's transaction. */
  async insertReplay(tx: Tx, id: string, original: DeliveryRow): Promise<DeliveryRow> {
    const row = await this.first<DeliveryRow>(
      `INSERT INTO webhook_deliveries (id, app_id, event_id, event_type, idempotency_key, body, test, replay_of, package_id, endpoint_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
      [
        id,
        original.app_id,
        original.event_id,
        original.event_type,
        original.idempotency_key,
        original.body,
        original.test,
        original.id,
        original.package_id,
        original.endpoint_id,
      ],
      tx,
    );
    return row!;
  }

  /** A page of an endpoint's delivery log, newest first; `take` rows at most. */
  async page(endpointId: string, filter: DeliveryLogFilter, take: number): Promise<DeliveryRow[]> {
    return this.rows<DeliveryRow>(
      `SELECT * FROM webhook_deliveries
        WHERE endpoint_id = $1
          AND ($2::text IS NULL OR status = $2)
          AND ($3::text IS NULL OR event_type = $3)
          AND ($4::timestamptz IS NULL OR created_at >= $4)
          AND ($5::timestamptz IS NULL OR created_at < $5)
          AND ($6::timestamptz IS NULL OR (created_at, id) < ($6, $7))
          AND ($9::text IS NULL OR package_id = $9)
        ORDER BY created_at DESC, id DESC
        LIMIT $8`,
      [
        endpointId,
        filter.status,
        filter.eventType,
        filter.since,
        filter.until,
        filter.after?.at ?? null,
        filter.after?.id ?? null,
        take,
        filter.packageId,
      ],
    );
  }

  async findForApp(deliveryId: string, appId: string): Promise<DeliveryRow | null> {
    return this.first<DeliveryRow>(`SELECT * FROM webhook_deliveries WHERE id = $1 AND app_id = $2`, [deliveryId, appId]);
  }

  async findForEndpoint(deliveryId: string, endpointId: string): Promise<DeliveryRow | null> {
    return this.first<DeliveryRow>(`SELECT * FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2`, [deliveryId, endpointId]);
  }

  /** The attempt log of a delivery, in attempt order. */
  async attemptsOf(deliveryId: string): Promise<AttemptRow[]> {
    return this.rows<AttemptRow>(
      `SELECT attempt, started_at, request_headers, status_code, latency_ms, response_body, error_class, outcome
         FROM webhook_attempts WHERE delivery_id = $1 ORDER BY attempt`,
      [deliveryId],
    );
  }

  /** Failed deliveries of the endpoint since `since` that are the latest chain of their event, oldest first. */
  async latestFailedSince(endpointId: string, since: Date): Promise<DeliveryRow[]> {
    return this.rows<DeliveryRow>(
      `SELECT d.* FROM webhook_deliveries d
        WHERE d.endpoint_id = $1 AND d.status = 'failed' AND d.created_at >= $2
          AND NOT EXISTS (SELECT 1 FROM webhook_deliveries r
                           WHERE r.endpoint_id = d.endpoint_id AND r.event_id = d.event_id AND r.created_at > d.created_at)
        ORDER BY d.created_at, d.id`,
      [endpointId, since],
    );
  }

  /** The endpoint of a delivery. */
  async endpointOf(deliveryId: string): Promise<string | null> {
    const row = await this.first<{ endpoint_id: string }>(`SELECT endpoint_id FROM webhook_deliveries WHERE id = $1`, [deliveryId]);
    return row?.endpoint_id ?? null;
  }

  /**
   * A test delivery that was sent already (an endpoint check's `ping`): the
   * row in its final state and its one attempt line, in one statement.
   */
  async insertSent(delivery: Omit<NewDelivery, 'disabled' | 'replayOf' | 'packageId'>, attempt: AttemptRecord): Promise<void> {
    await this.execute(
      `WITH written AS (
         INSERT INTO webhook_deliveries (id, app_id, endpoint_id, event_id, event_type, idempotency_key, body, test, status, attempt_count,
                                         last_status_code, last_error, delivered_at, failed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1, $10, $11, CASE WHEN $9 = 'delivered' THEN now() END,
                 CASE WHEN $9 = 'failed' THEN now() END)
         RETURNING id
       )
       INSERT INTO webhook_attempts (delivery_id, attempt, started_at, request_headers, status_code, latency_ms, response_body, error_class, outcome)
       SELECT id, 1, $12, $13, $10, $14, $15, $16, $9 FROM written`,
      [
        delivery.id,
        delivery.appId,
        delivery.endpointId,
        delivery.eventId,
        delivery.type,
        delivery.idempotencyKey,
        delivery.body,
        delivery.test,
        attempt.outcome,
        attempt.code,
        attempt.error,
        attempt.logged.startedAt,
        JSON.stringify(attempt.logged.headers),
        attempt.logged.latencyMs,
        attempt.logged.body,
        attempt.logged.errorClass,
      ],
    );
  }

  /**
   * Claims up to `limit` due deliveries of the endpoint, oldest due first:
   * takes their next attempt number and leases them for `leaseSeconds`.
   * Rows another drainer is claiming right now are skipped, not waited for.
   */
  async claimDue(endpointId: string, limit: number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
    return this.prepared<ClaimedDelivery>('webhook_deliveries_claim_due', CLAIM_DUE_SQL, [endpointId, limit, leaseSeconds]);
  }

  /** Ends every due delivery of the endpoint with `reason`, without an attempt; how many. */
  async failDue(endpointId: string, reason: string): Promise<number> {
    const row = await this.first<{ ended: number }>(
      `WITH ended AS (
         UPDATE webhook_deliveries SET status = 'failed', last_error = $2, failed_at = now(), updated_at = now()
          WHERE endpoint_id = $1 AND status = 'pending' AND next_attempt_at <= now() + interval '50 milliseconds'
          RETURNING id
       )
       SELECT count(*)::int AS ended FROM ended`,
      [endpointId, reason],
    );
    return row!.ended;
  }

  /**
   * Writes a batch of outcomes in one statement: the attempt log lines and
   * each delivery's new state. A delivery that is no longer pending (its
   * endpoint's log was purged, an operator ended it) is left as it is.
   */
  async recordOutcomes(records: AttemptRecord[]): Promise<void> {
    const column = <T>(pick: (r: AttemptRecord) => T) => records.map(pick);
    // Not a prepared statement: a generic plan of this join ran 2.6× slower than a custom one in the webhook burst.
    await this.execute(
      `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::timestamptz[], $6::int[], $7::timestamptz[],
                              $8::jsonb[], $9::int[], $10::text[], $11::text[])
                    AS t(id, outcome, code, error, next_at, attempt, started_at, headers, latency_ms, body, error_class)
       ), logged AS (
         INSERT INTO webhook_attempts (delivery_id, attempt, started_at, request_headers, status_code, latency_ms, response_body, error_class, outcome)
         SELECT id, attempt, started_at, headers, code, latency_ms, body, error_class, outcome FROM input
         ON CONFLICT DO NOTHING
       )
       UPDATE webhook_deliveries d SET
         status = CASE WHEN i.outcome = 'retry' THEN 'pending' ELSE i.outcome END,
         next_attempt_at = COALESCE(i.next_at, d.next_attempt_at),
         last_status_code = CASE WHEN i.outcome = 'retry' THEN i.code ELSE COALESCE(i.code, d.last_status_code) END,
         last_error = i.error,
         delivered_at = CASE WHEN i.outcome = 'delivered' THEN now() END,
         failed_at = CASE WHEN i.outcome = 'failed' THEN now() END,
         updated_at = now()
        FROM input i
       WHERE d.id = i.id AND d.status = 'pending'`,
      [
        column((r) => r.deliveryId),
        column((r) => r.outcome),
        column((r) => r.code),
        column((r) => r.error),
        column((r) => r.nextAt),
        column((r) => r.logged.attempt),
        column((r) => r.logged.startedAt),
        column((r) => JSON.stringify(r.logged.headers)),
        column((r) => r.logged.latencyMs),
        column((r) => r.logged.body),
        column((r) => r.logged.errorClass),
      ],
    );
  }

  /** When the endpoint's next pending delivery is due; null when none is pending. */
  async nextDue(endpointId: string): Promise<Date | null> {
    const [row] = await this.prepared<{ at: Date | null }>(
      'webhook_deliveries_next_due',
      `SELECT min(next_attempt_at) AS at FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending'`,
      [endpointId],
    );
    return row?.at ?? null;
  }
}
