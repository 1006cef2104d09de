import type { Pool, PoolClient } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import type { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import { afterTransaction } from './after-transaction';
import { NotifiedCache } from './notified-cache';

/**
 * Where a repository method runs its statements: a transaction's manager
 * (`dataSource.transaction(async (tx) => repo.insert(tx, …))`) or, when
 * omitted, the data source's own manager (one statement, its own transaction).
 */
export type Tx = EntityManager;

/**
 * The small base of every `*.repository.ts` (as novu's `libs/dal` gives each
 * collection's repository one base): the only place that calls TypeORM's
 * `query()`. Repositories own their tables' SQL, their row types and the
 * mapping to the domain shape; services, guards, caches and processors ask
 * them and never write SQL. A repository that changes rows inside a caller's
 * transaction takes the caller's `Tx` as its first argument.
 */
export abstract class SqlRepository {
  protected constructor(protected readonly dataSource: DataSource) {}

  /**
   * After the transaction of `tx` ends (at once without one), drops what this
   * application instance remembers for `owner` (every entry with null) in its
   * `NotifiedCache`s on `channel`: the in-process half of a change that the
   * channel's triggers announce to every other instance. Called by the write
   * methods right after their statement, so no caller can forget it.
   */
  protected forgetAfterTransaction(tx: Tx | undefined, channel: string, owner: string | null): void {
    afterTransaction(tx, () => NotifiedCache.forgetInScope(this.dataSource, channel, owner));
  }

  /** The caller's transaction, or the data source's manager. */
  protected db(tx?: Tx): EntityManager {
    return tx ?? this.dataSource.manager;
  }

  /** Rows of a SELECT, or of a write whose result is a SELECT over `RETURNING` (a CTE). */
  protected rows<Row>(sql: string, params: unknown[] = [], tx?: Tx): Promise<Row[]> {
    return this.db(tx).query<Row[]>(sql, params);
  }

  /** The first row, or null. */
  protected async first<Row>(sql: string, params: unknown[] = [], tx?: Tx): Promise<Row | null> {
    const rows = await this.rows<Row>(sql, params, tx);
    return rows[0] ?? null;
  }

  /**
   * Rows of a bare `UPDATE`/`DELETE … RETURNING`, and how many rows changed.
   * TypeORM's postgres driver answers such a statement with `[rows, count]`
   * instead of the rows; this undoes that in one place.
   */
  protected async changed<Row = never>(sql: string, params: unknown[] = [], tx?: Tx): Promise<{ rows: Row[]; count: number }> {
    const result: unknown = await this.db(tx).query(sql, params);
    if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
      return { rows: result[0] as Row[], count: result[1] };
    }
    const rows = Array.isArray(result) ? (result as Row[]) : [];
    return { rows, count: rows.length };
  }

  /**
   * A named prepared statement: each connection parses and plans it once,
   * then only binds and executes. On the pool (one statement is its own
   * transaction), or on the connection of `tx`'s transaction. For the hot
   * paths (the message send, the event dispatcher and the webhook drain),
   * where parsing and planning every time and TypeORM's per-query
   * bookkeeping cost more than the work: the backbone's statements spent as
   * long being planned as being run. `name` must be unique per SQL text.
   * Answers the rows, also of a bare `UPDATE … RETURNING` (no `[rows, count]`).
   */
  protected async prepared<Row>(name: string, sql: string, params: unknown[], tx?: Tx): Promise<Row[]> {
    const runner = tx?.queryRunner as PostgresQueryRunner | undefined;
    if (runner?.isTransactionActive) {
      const client = (await runner.connect()) as PoolClient;
      const result = await client.query<Row & object>({ name, text: sql, values: params });
      return result.rows;
    }
    const pool = (this.dataSource.driver as PostgresDriver).master as Pool;
    const result = await pool.query<Row & object>({ name, text: sql, values: params });
    return result.rows;
  }

  /**
   * An offset page and the total it is part of, in one prepared statement:
   * `sql` selects the page with `$1` the owner, `$2` the limit and `$3` the
   * offset, and a `total` column computed once (a scalar subquery: PostgreSQL
   * runs it as an InitPlan, not per row). Only a page past the end has no
   * row to carry the total; then `count` (the owner as `$1`) answers it. One
   * round trip and no planning per request, where a page and a `count(*)`
   * side by side took two connections, each planned afresh.
   */
  protected async pageWithTotal<Row extends { total: number }>(
    name: string,
    sql: string,
    count: string,
    owner: string,
    limit: number,
    offset: number,
  ): Promise<{ rows: Row[]; total: number }> {
    const rows = await this.prepared<Row>(name, sql, [owner, limit, offset]);
    if (rows.length > 0) return { rows, total: rows[0].total };
    if (offset === 0) return { rows, total: 0 };
    const [{ total }] = await this.prepared<{ total: number }>(`${name}_count`, count, [owner]);
    return { rows, total };
  }

  /** A statement whose answer does not matter (DDL, an INSERT without RETURNING). */
  protected async execute(sql: string, params: unknown[] = [], tx?: Tx): Promise<void> {
    await this.db(tx).query(sql, params);
  }
}
