import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { KEYSET_AT_SQL, KeysetPosition } from '../../common/pagination/keyset-cursor';
import { eachBatch } from '../../infra/database/in-batches';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';

/** An `app_events` row: one webhook-able event of one app, as its envelope. */
export interface AppEventRow {
  id: string;
  app_id: string;
  type: string;
  /** The webhook envelope, the bytes an endpoint receives. */
  body: string;
  created_at: Date;
  /** `created_at` to the microsecond, for the next page's cursor. */
  cursor_at: string;
}

/** An event to keep, with its envelope already serialised. */
export interface NewAppEvent {
  id: string;
  appId: string;
  type: string;
  body: string;
  createdAt: Date;
}

/** Filters of the events list (null: any). */
export interface AppEventFilter {
  types: string[] | null;
  since: string | null;
  until: string | null;
  after: KeysetPosition | null;
}

const COLUMNS = `id, app_id, type, body, created_at, ${KEYSET_AT_SQL('created_at')} AS cursor_at`;

/** The only reader and writer of `app_events`, the store behind the events API. */
@Injectable()
export class AppEventsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** A dispatch batch in one statement; an event kept before (a re-dispatch after a crash) is skipped. */
  async insertMany(tx: Tx, events: NewAppEvent[]): Promise<void> {
    await this.prepared(
      'app_events_insert_many',
      `INSERT INTO app_events (id, app_id, type, body, created_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])
       ON CONFLICT (id) DO NOTHING`,
      [
        events.map((e) => e.id),
        events.map((e) => e.appId),
        events.map((e) => e.type),
        events.map((e) => e.body),
        events.map((e) => e.createdAt),
      ],
      tx,
    );
  }

  /**
   * A page of the apps' events, newest first; `take` rows at most. Each app's newest rows come from its own ordered
   * index scan (a lateral join per app), then the apps' rows are merged, instead of reading every row of the apps
   * and sorting them as `app_id = ANY(…)` would.
   */
  async page(appIds: string[], filter: AppEventFilter, take: number): Promise<AppEventRow[]> {
    return this.rows<AppEventRow>(
      `SELECT e.* FROM unnest($1::text[]) AS a(app_id)
       CROSS JOIN LATERAL (
         SELECT ${COLUMNS} FROM app_events
          WHERE app_id = a.app_id
            AND ($2::text[] IS NULL OR type = ANY($2::text[]))
            AND ($3::timestamptz IS NULL OR created_at >= $3)
            AND ($4::timestamptz IS NULL OR created_at < $4)
            AND ($5::timestamptz IS NULL OR (created_at, id) < ($5, $6))
          ORDER BY created_at DESC, id DESC
          LIMIT $7
       ) e
       ORDER BY e.created_at DESC, e.id DESC
       LIMIT $7`,
      [appIds, filter.types, filter.since, filter.until, filter.after?.at ?? null, filter.after?.id ?? null, take],
    );
  }

  async findForApps(eventId: string, appIds: string[]): Promise<AppEventRow | null> {
    return this.first<AppEventRow>(`SELECT ${COLUMNS} FROM app_events WHERE id = $1 AND app_id = ANY($2::text[])`, [eventId, appIds]);
  }

  /** Drops events older than `days` in small batches; how many. */
  purgeOlderThan(days: number): Promise<number> {
    return eachBatch(
      async (limit) =>
        (
          await this.changed(
            `DELETE FROM app_events WHERE id IN (
               SELECT id FROM app_events WHERE created_at < now() - make_interval(days => $2) LIMIT $1)`,
            [limit, days],
          )
        ).count,
    );
  }
}
