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
  controllers: [CapabilitiesController, ActionsController],
  providers: [
    ExecutionTracesRepository,
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
  ],
  exports: [
    ExecutionTracesRepository,
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
