import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { MarketplaceModule } from '../marketplace/marketplace.module';
import { PackagesModule } from '../packages/packages.module';
import { ProvidersModule } from '../providers/providers.module';
import { ActionConfirmationsRepository } from './action-confirmations.repository';
import { ActionConfirmations } from './action-confirmations.service';
import { ActionDecisions } from './action-decisions.service';
import { ActionsController } from './actions.controller';
import { CapabilitiesController } from './capabilities.controller';
import { CapabilityCallerGuard } from './capability-caller.guard';
import { CapabilityExecutor } from './capability-executor.service';
import { CapabilityMetricsController } from './capability-metrics.controller';
import { CapabilityMetricsRepository } from './capability-metrics.repository';
import { CapabilityMetrics } from './capability-metrics.service';
import { DevSessionsController } from './dev-sessions.controller';
import { DevSessionsRepository } from './dev-sessions.repository';
import { DevSessions } from './dev-sessions.service';
import { ExecutionLogController } from './execution-log.controller';
import { ExecutionLogRepository } from './execution-log.repository';
import { ExecutionLog } from './execution-log.service';
import { ExecutionTracesRepository } from './execution-traces.repository';
import { ExecutionTraces } from './execution-traces.service';
import { RealtimeSubscriptions } from './realtime-subscriptions.service';
import { RuntimeBridgeQueue } from './runtime-bridge.queue';
import { RuntimeInvoker } from './runtime-invoker.service';
import { StateCache } from './state-cache';
import { StatePoller } from './state-poller';

/** Executes capabilities on provider runtimes in all five modes (api side; the worker adds the poller and the stream supervisor). */
@Module({
  imports: [AccessModule, ProvidersModule, MarketplaceModule, PackagesModule],
  controllers: [CapabilitiesController, ActionsController, ExecutionLogController, CapabilityMetricsController, DevSessionsController],
  providers: [
    ExecutionTracesRepository,
    CapabilityMetricsRepository,
    CapabilityMetrics,
    ActionConfirmationsRepository,
    RuntimeInvoker,
    ExecutionTraces,
    StateCache,
    ActionConfirmations,
    ActionDecisions,
    RealtimeSubscriptions,
    CapabilityExecutor,
    CapabilityCallerGuard,
    StatePoller,
    RuntimeBridgeQueue,
    ExecutionLogRepository,
    ExecutionLog,
    DevSessionsRepository,
    DevSessions,
  ],
  exports: [
    ExecutionTracesRepository,
    CapabilityMetrics,
    ActionConfirmationsRepository,
    ExecutionTraces,
    CapabilityExecutor,
    StateCache,
    RealtimeSubscriptions,
    RuntimeInvoker,
    StatePoller,
    RuntimeBridgeQueue,
  ],
})
export class RuntimeBridgeModule {}
