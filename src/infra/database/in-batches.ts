/** Something that runs SQL: a DataSource, an EntityManager or a repository. */
interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

export const DEFAULT_BATCH = 5_000;

/**
 * Runs an UPDATE or DELETE whose `$1` is a `LIMIT` until a batch comes back
 * short, keeping every statement (and its locks) small. Returns the rows touched.
 */
export async function inBatches(db: Queryable, sql: string, params: unknown[] = [], batch = DEFAULT_BATCH): Promise<number> {
  let total = 0;
  for (;;) {
    // TypeORM's PostgreSQL driver answers UPDATE/DELETE with [rows, affectedCount].
    const [, count] = (await db.query(sql, [batch, ...params])) as [unknown, number];
    total += count;
    if (count < batch) return total;
  }
}
