import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository } from '../database/sql-repository';

/** What the outboxes and the delivery log hold right now, as `GET /metrics` reports it. */
export interface BackboneBacklog {
  eventsUndispatched: number;
  /** 0 when nothing waits. */
  eventsOldestAgeSeconds: number;
  jobsUnrelayed: number;
  /** 0 when nothing waits. */
  jobsOldestAgeSeconds: number;
  jobsRelayedUnfinished: number;
  jobsFailed: number;
  webhookDeliveriesPending: number;
}

/**
 * A scrape reads at most this many rows per count, so it stays cheap however far the backbone has fallen behind:
 * a count at the cap means "at least", and the oldest event age is then taken among the rows read.
 */
export const BACKLOG_COUNT_CAP = 100_000;

/**
 * Read-only view of the backbone's tables for the metrics gauges. The tables belong to the events, job outbox and
 * webhooks code; this reads their sizes only (no rows, no writes), in one statement served by their partial indexes.
 */
@Injectable()
export class BackboneBacklogRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  async read(): Promise<BackboneBacklog> {
    const rows = await this.rows<Record<keyof BackboneBacklog, string | number | null>>(
      `WITH pending_events AS (SELECT created_at FROM events WHERE dispatched_at IS NULL LIMIT $1)
       SELECT
         (SELECT count(*) FROM pending_events)::int AS "eventsUndispatched",
         (SELECT extract(epoch FROM now() - min(created_at)) FROM pending_events)::float8 AS "eventsOldestAgeSeconds",
         (SELECT count(*) FROM (SELECT 1 FROM job_outbox WHERE relayed_at IS NULL LIMIT $1) r)::int AS "jobsUnrelayed",
         (SELECT extract(epoch FROM now() - created_at) FROM job_outbox WHERE relayed_at IS NULL
           ORDER BY created_at LIMIT 1)::float8 AS "jobsOldestAgeSeconds",
         (SELECT count(*) FROM (SELECT 1 FROM job_outbox WHERE relayed_at IS NOT NULL AND failed_at IS NULL LIMIT $1) r)::int AS "jobsRelayedUnfinished",
         (SELECT count(*) FROM (SELECT 1 FROM job_outbox WHERE failed_at IS NOT NULL LIMIT $1) r)::int AS "jobsFailed",
         (SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries WHERE status = 'pending' LIMIT $1) d)::int AS "webhookDeliveriesPending"`,
      [BACKLOG_COUNT_CAP],
    );
    const row = rows[0];
    // A row created a moment "after" now() (clock of another session's transaction) is not a negative lag.
    const seconds = (value: string | number | null) => Math.max(0, Number(value ?? 0));
    return {
      eventsUndispatched: Number(row.eventsUndispatched),
      eventsOldestAgeSeconds: seconds(row.eventsOldestAgeSeconds),
      jobsUnrelayed: Number(row.jobsUnrelayed),
      jobsOldestAgeSeconds: seconds(row.jobsOldestAgeSeconds),
      jobsRelayedUnfinished: Number(row.jobsRelayedUnfinished),
      jobsFailed: Number(row.jobsFailed),
      webhookDeliveriesPending: Number(row.webhookDeliveriesPending),
    };
  }
}
