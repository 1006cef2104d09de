import { EventSubscriber } from 'typeorm';
import type { EntityManager, EntitySubscriberInterface, QueryRunner, TransactionCommitEvent, TransactionRollbackEvent } from 'typeorm';

/** Work waiting for the end of the outermost transaction of a query runner. */
const waiting = new WeakMap<QueryRunner, Array<() => void>>();
/** Work waiting for the outermost transaction's commit only (dropped on rollback). */
const waitingForCommit = new WeakMap<QueryRunner, Array<() => void>>();

/**
 * Runs `work` once the transaction that `tx` (a `Tx`) belongs to has ended (committed
 * or rolled back), or at once when `tx` is no transaction (a statement on the
 * data source's manager, which committed when it returned). Meant for
 * invalidating what a process remembers (`NotifiedCache`): forgetting before
 * the commit would let a concurrent lookup read and keep the old rows, and
 * forgetting after a rollback costs only a lookup. Call it after the
 * statement that changed the rows. `work` must not throw or wait.
 */
export function afterTransaction(tx: EntityManager | undefined, work: () => void): void {
  runAfter(waiting, tx, work);
}

/**
 * Runs `work` once the transaction that `tx` belongs to has committed (never
 * after a rollback), or at once when `tx` is no transaction. Meant for
 * handing committed work on (JobOutbox.relayAfterCommit). Work registered in
 * a savepoint that was rolled back still runs at the outer commit: it must
 * find out for itself whether what it hands on exists. `work` must not throw
 * or wait.
 */
export function afterCommit(tx: EntityManager | undefined, work: () => void): void {
  runAfter(waitingForCommit, tx, work);
}

/** Waits in `map` for the end of `tx`'s outermost transaction, or runs at once without one. */
function runAfter(map: WeakMap<QueryRunner, Array<() => void>>, tx: EntityManager | undefined, work: () => void): void {
  const runner = tx?.queryRunner;
  if (!runner?.isTransactionActive) {
    work();
    return;
  }
  const list = map.get(runner);
  if (list) list.push(work);
  else map.set(runner, [work]);
}

/**
 * Hands the end of each outermost transaction to `afterTransaction`'s waiting
 * work (registered in the data source options). TypeORM also announces the
 * release of a savepoint (a nested transaction) as a commit: the runner's
 * transaction is then still active, and the work waits for the outer end.
 * (TypeORM instantiates only the listed classes that carry the decorator.)
 */
@EventSubscriber()
export class TransactionEndSubscriber implements EntitySubscriberInterface {
  afterTransactionCommit(event: TransactionCommitEvent): void {
    runWaiting(event.queryRunner, true);
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    runWaiting(event.queryRunner, false);
  }
}

function runWaiting(runner: QueryRunner, committed: boolean): void {
  if (runner.isTransactionActive) return;
  const list = waiting.get(runner) ?? [];
  const onCommit = waitingForCommit.get(runner) ?? [];
  waiting.delete(runner);
  waitingForCommit.delete(runner);
  for (const work of list) work();
  if (committed) for (const work of onCommit) work();
}
