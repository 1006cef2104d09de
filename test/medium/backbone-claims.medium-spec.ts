import { CLAIM_DUE_SQL as EVENTS_CLAIM_SQL } from '../../src/modules/events/events.repository';
import { CLAIM_DUE_SQL as DELIVERIES_CLAIM_SQL } from '../../src/modules/webhooks/webhook-deliveries.repository';
import { newId } from '../../src/common/ids';
import { MediumContext, mediumContext } from './medium';

/** One node of PostgreSQL's JSON plan, as far as these tests read it. */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  Plans?: PlanNode[];
}

/**
 * The backbone's two claims (the event dispatcher's and the webhook drain's)
 * under a backlog: each must read only the rows it takes. When the index
 * could not serve the claim's order, every claim read and sorted the whole
 * backlog: a claim cost as much as the backlog was long.
 */
describe('backbone claims under a backlog (medium: real database)', () => {
  let ctx: MediumContext;
  const BACKLOG = 3000;
  const TAKE = 32;

  beforeAll(async () => {
    ctx = await mediumContext([]);
  });

  afterAll(async () => {
    await ctx?.close();
  });

  /** Runs `sql` under EXPLAIN ANALYZE in a transaction that is rolled back, and answers its plan. */
  async function executedPlan(sql: string, params: unknown[]): Promise<PlanNode> {
    const runner = ctx.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      const [row] = (await runner.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params)) as Array<{
        'QUERY PLAN': Array<{ Plan: PlanNode }>;
      }>;
      return row['QUERY PLAN'][0].Plan;
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  }

  /** Every node that reads rows of `table`, with how many rows it produced. */
  function scansOf(plan: PlanNode, table: string): PlanNode[] {
    const own = plan['Relation Name'] === table && /Scan/.test(plan['Node Type']) ? [plan] : [];
    return [...own, ...(plan.Plans ?? []).flatMap((child) => scansOf(child, table))];
  }

  /**
   * What the claim's `ORDER BY … LIMIT` reads of `table` to choose its rows: the scans under the plan's
   * Limit nodes. (How the chosen ids are then joined back for the update is the planner's choice by
   * table size: on a table this small a hash join over all of it is as cheap as 32 lookups.)
   */
  function choosingScans(plan: PlanNode, table: string): PlanNode[] {
    if (plan['Node Type'] === 'Limit') return scansOf(plan, table);
    return (plan.Plans ?? []).flatMap((child) => choosingScans(child, table));
  }

  it('the webhook drain reads only the deliveries it claims, not the endpoint backlog', async () => {
    const developer = await ctx.make.developer();
    const app = await ctx.make.app(developer.id);
    const endpointId = newId('whe');
    await ctx.dataSource.query(`INSERT INTO webhook_endpoints (id, app_id, is_primary, secret_encrypted) VALUES ($1, $2, true, 'sealed')`, [
      endpointId,
      app.id,
    ]);
    // As a fan-out leaves them: one statement, so every row has the same due time.
    await ctx.dataSource.query(
      `INSERT INTO webhook_deliveries (id, app_id, endpoint_id, event_id, event_type, idempotency_key, body)
       SELECT 'whd_' || lpad(g::text, 8, '0'), $1, $2, 'evt_' || g, 'install.created', 'key_' || g, '{}'
         FROM generate_series(1, $3::int) g`,
      [app.id, endpointId, BACKLOG],
    );
    await ctx.dataSource.query('ANALYZE webhook_deliveries');

    const plan = await executedPlan(DELIVERIES_CLAIM_SQL, [endpointId, TAKE, 35]);

    const scans = choosingScans(plan, 'webhook_deliveries');
    expect(scans.length).toBeGreaterThan(0);
    // The due rows in claim order come from the index, and the scan stops after the rows taken.
    const largest = Math.max(...scans.map((scan) => scan['Actual Rows']));
    expect(largest).toBeLessThanOrEqual(TAKE);
  });

  it('the event dispatcher reads only the events it claims, not the whole outbox', async () => {
    // One transaction's events: the same created and due time.
    await ctx.dataSource.query(
      `INSERT INTO events (id, type, payload) SELECT 'evt_' || lpad(g::text, 8, '0'), 'install.created', '{}' FROM generate_series(1, $1::int) g`,
      [BACKLOG],
    );
    await ctx.dataSource.query('ANALYZE events');

    const plan = await executedPlan(EVENTS_CLAIM_SQL, [TAKE]);

    const scans = choosingScans(plan, 'events');
    expect(scans.length).toBeGreaterThan(0);
    const largest = Math.max(...scans.map((scan) => scan['Actual Rows']));
    expect(largest).toBeLessThanOrEqual(TAKE);
  });
});
