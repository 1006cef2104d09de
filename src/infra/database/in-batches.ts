/** Something that runs SQL: a DataSource or an EntityManager. */
interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

export const DEFAULT_BATCH = 5_000;

/**
 * Runs `step` (one UPDATE or DELETE of at most `limit` rows, answering how
 * many it touched) until a batch comes back short, keeping every statement
 * (and its locks) small. Returns the rows touched. Repositories call it with
 * their own statement: `eachBatch((limit) => this.changed(sql, [limit, …]).then((r) => r.count))`.
 */
export async function eachBatch(step: (limit: number) => Promise<number>, batch = DEFAULT_BATCH): Promise<number> {
  let total = 0;
  for (;;) {
    const count = await step(batch);
    total += count;
    if (count < batch) return total;
  }
}

/**
 * `eachBatch` for a statement whose `$1` is the `LIMIT`, run on `db`. Kept for
 * the purges not yet in a repository; a repository uses `eachBatch` with `changed()`.
 */
export function inBatches(db: Queryable, sql: string, params: unknown[] = [], batch = DEFAULT_BATCH): Promise<number> {
  return eachBatch(async (limit) => {
    // TypeORM's PostgreSQL driver answers UPDATE/DELETE with [rows, affectedCount].
    const [, count] = (await db.query(sql, [limit, ...params])) as [unknown, number];
    return count;
  }, batch);
}
