import type { PoolClient } from 'pg';
import { MarketplaceModule } from '../../src/modules/marketplace/marketplace.module';
import { InstallsService } from '../../src/modules/marketplace/installs.service';
import { ExecutionTracesRepository, NewTrace } from '../../src/modules/runtime-bridge/execution-traces.repository';
import { RuntimeBridgeModule } from '../../src/modules/runtime-bridge/runtime-bridge.module';
import { WebhookSecretSourceModule } from '../../src/modules/webhooks/webhook-secret-source.module';
import { MediumContext, mediumContext } from './medium';

/**
 * The batch statement behind reads' traces (`ExecutionTracesRepository.insertMany`,
 * written by `ExecutionTraces.recordAfterAnswer`), on a real database: every
 * trace and its event in one statement, a trace whose install is gone skipped
 * with its event instead of failing the others, and the dispatchers woken only
 * when an event was written.
 */
describe('ExecutionTracesRepository.insertMany (medium: real module, real database)', () => {
  let ctx: MediumContext;
  let repository: ExecutionTracesRepository;
  let install: { id: string; userId: string; appId: string; packageId: string };

  const trace = (id: string, installId: string, outcome: string): NewTrace => ({
    requestId: id,
    installId,
    userId: install.userId,
    appId: install.appId,
    packageId: install.packageId,
    capability: 'balance',
    mode: 'state',
    trigger: 'api',
    outcome,
    errorCode: null,
    errorMessage: null,
    attempts: outcome === 'cached' ? 0 : 1,
    retriesExhausted: false,
    phases: { accept: 0.4, invoke: 1.5 },
    durationMs: 2,
    durable: false,
  });
  const event = (id: string, requestId: string) => ({
    id,
    type: 'capability.invoked',
    payload: { app_id: install.appId, data: { request_id: requestId, status: 'ok' } },
  });

  beforeAll(async () => {
    ctx = await mediumContext([RuntimeBridgeModule, MarketplaceModule, WebhookSecretSourceModule]);
    repository = ctx.get(ExecutionTracesRepository);
    const user = await ctx.make.user();
    const pkg = await ctx.make.publishedPackage();
    const installed = await ctx.get(InstallsService).install(user.id, pkg.id);
    const [row] = await ctx.dataSource.query<Array<{ app_id: string }>>(`SELECT app_id FROM packages WHERE id = $1`, [pkg.id]);
    install = { id: installed.install.id, userId: user.id, appId: row.app_id, packageId: pkg.id };
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('writes every trace and the events of those that bring one, in one statement; a trace of a gone install is skipped with its event', async () => {
    await repository.insertMany([
      { trace: trace('req_batch_hit', install.id, 'cached') },
      { trace: trace('req_batch_call', install.id, 'ok'), event: event('evt_batch_call', 'req_batch_call') },
      { trace: trace('req_batch_gone', 'inst_gone', 'ok'), event: event('evt_batch_gone', 'req_batch_gone') },
    ]);
    const traces = await ctx.dataSource.query<Array<{ id: string; outcome: string; phases: Record<string, number>; attempts: number }>>(
      `SELECT id, outcome, phases, attempts FROM capability_executions WHERE id LIKE 'req_batch_%' ORDER BY id`,
    );
    expect(traces).toEqual([
      { id: 'req_batch_call', outcome: 'ok', phases: { accept: 0.4, invoke: 1.5 }, attempts: 1 },
      { id: 'req_batch_hit', outcome: 'cached', phases: { accept: 0.4, invoke: 1.5 }, attempts: 0 },
    ]);
    const events = await ctx.dataSource.query<Array<{ id: string; type: string; payload: unknown }>>(
      `SELECT id, type, payload FROM events WHERE id LIKE 'evt_batch_%'`,
    );
    expect(events).toEqual([
      { id: 'evt_batch_call', type: 'capability.invoked', payload: event('evt_batch_call', 'req_batch_call').payload },
    ]);
  });

  it('writes a batch holding a durable trace too (that batch waits for the disk)', async () => {
    await repository.insertMany([
      { trace: { ...trace('req_durable_action', install.id, 'ok'), mode: 'action', durable: true } },
      { trace: trace('req_durable_read', install.id, 'cached') },
    ]);
    const written = await ctx.dataSource.query<Array<{ id: string; mode: string }>>(
      `SELECT id, mode FROM capability_executions WHERE id LIKE 'req_durable_%' ORDER BY id`,
    );
    expect(written).toEqual([
      { id: 'req_durable_action', mode: 'action' },
      { id: 'req_durable_read', mode: 'state' },
    ]);
  });

  it('wakes the dispatchers on commit when the batch wrote an event, and not for cache hits alone', async () => {
    const runner = ctx.dataSource.createQueryRunner();
    const client = (await runner.connect()) as PoolClient;
    const notices: string[] = [];
    const listener = (message: { channel: string }) => notices.push(message.channel);
    client.on('notification', listener);
    await client.query('LISTEN domain_events');
    try {
      await repository.insertMany([{ trace: trace('req_wake_hit', install.id, 'cached') }]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(notices).toEqual([]);
      await repository.insertMany([{ trace: trace('req_wake_call', install.id, 'ok'), event: event('evt_wake_call', 'req_wake_call') }]);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(notices).toEqual(['domain_events']);
    } finally {
      await client.query('UNLISTEN domain_events');
      client.off('notification', listener);
      await runner.release();
    }
  });
});
