import { DynamicModule, Logger, Module, ModuleMetadata, OnModuleInit, Type } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { SHARED_AREAS } from './areas';
import { AppConfig } from './config/app-config';
import { CoreModule } from './core.module';
import { MAIL_PROCESSORS } from './infra/mail/mail.worker';
import { JobRelay } from './infra/queue/job-relay';
import { QUEUE_NAMES } from './infra/queue/queues';
import { EventDispatcher } from './modules/events/event-dispatcher';
import { AGENTS_PROCESSORS } from './modules/agents/agents.worker';
import { CONFORMANCE_PROCESSORS } from './modules/conformance/conformance.worker';
import { GATEWAY_SUBSCRIBERS } from './modules/gateway/gateway.worker';
import { MARKETPLACE_SUBSCRIBERS } from './modules/marketplace/marketplace.worker';
import { PRIVACY_PROCESSORS } from './modules/privacy/privacy.worker';
import { PROVIDERS_PROCESSORS } from './modules/providers/providers.worker';
import {
  RUNTIME_BRIDGE_PROCESSORS,
  RUNTIME_BRIDGE_SUBSCRIBERS,
  RUNTIME_BRIDGE_SUPERVISORS,
} from './modules/runtime-bridge/runtime-bridge.worker';
import { SYSTEM_PROCESSORS } from './modules/system/system.worker';
import { WEBHOOK_PROCESSORS, WEBHOOK_SUBSCRIBERS } from './modules/webhooks/webhooks.worker';

/*
 * What only the worker role runs comes from each area's `<area>.worker.ts` lists (and infra/mail's), never from
 * an area module's own providers: so the api role, which imports the same area modules, registers none of them.
 */

/** Every BullMQ consumer. Only the worker role registers them. */
const PROCESSORS: Type[] = [
  ...SYSTEM_PROCESSORS,
  ...MAIL_PROCESSORS,
  ...CONFORMANCE_PROCESSORS,
  ...PRIVACY_PROCESSORS,
  ...AGENTS_PROCESSORS,
  ...RUNTIME_BRIDGE_PROCESSORS,
  ...WEBHOOK_PROCESSORS,
  ...PROVIDERS_PROCESSORS,
];
/** Domain event subscribers that only the worker runs. */
const SUBSCRIBERS: Type[] = [...GATEWAY_SUBSCRIBERS, ...WEBHOOK_SUBSCRIBERS, ...RUNTIME_BRIDGE_SUBSCRIBERS, ...MARKETPLACE_SUBSCRIBERS];
/** Long-running services of the worker role (realtime stream supervision). */
const SUPERVISORS: Type[] = [...RUNTIME_BRIDGE_SUPERVISORS];
/** Area modules whose services the processors and subscribers use (areas.ts). Their controllers are ignored: no HTTP here. */
const WORKER_AREAS = SHARED_AREAS;

const PROCESSOR_METADATA = 'bullmq:processor_metadata';

export interface WorkerModuleOptions {
  /** Running inside the api process (`APP_ROLE=all`): the core is already there. */
  embedded?: boolean;
  imports?: ModuleMetadata['imports'];
}

/** The worker role: queue processors, the event dispatcher, the job relay and schedulers. No HTTP. */
@Module({})
export class WorkerModule implements OnModuleInit {
  private readonly logger = new Logger('Worker');

  static forRoot(config: AppConfig, options: WorkerModuleOptions = {}): DynamicModule {
    return {
      module: WorkerModule,
      imports: [...(options.embedded ? [] : [CoreModule.forRoot(config)]), DiscoveryModule, ...WORKER_AREAS, ...(options.imports ?? [])],
      providers: [...PROCESSORS, ...SUBSCRIBERS, ...SUPERVISORS, EventDispatcher, JobRelay],
    };
  }

  /** A processor for a queue nobody declared is a typo that would silently never run: refuse to start. */
  onModuleInit(): void {
    for (const processor of PROCESSORS) {
      const metadata = Reflect.getMetadata(PROCESSOR_METADATA, processor) as { name?: string } | undefined;
      if (!metadata?.name || !QUEUE_NAMES.includes(metadata.name as never)) {
        throw new Error(`${processor.name} consumes unknown queue "${metadata?.name}"; declare it in infra/queue/queues.ts`);
      }
    }
    this.logger.log(
      `processing queues: ${PROCESSORS.map((p) => (Reflect.getMetadata(PROCESSOR_METADATA, p) as { name: string }).name).join(', ')}`,
    );
  }
}
