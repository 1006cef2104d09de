import { DynamicModule, Module, ModuleMetadata } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AppConfig } from './config/app-config';
import { CoreModule } from './core.module';
import { ErrorEnvelopeFilter } from './common/errors/error.filter';
import { HttpDrain } from './common/http/http-drain';
import { WorkerModule } from './worker.module';
import { API_ONLY_AREAS, SHARED_AREAS } from './areas';

/** Every area serves HTTP in the api role (see areas.ts for which ones the worker shares). */
const API_AREAS = [...SHARED_AREAS, ...API_ONLY_AREAS];

export interface AppModuleOptions {
  /** Also run the worker role in this process (`APP_ROLE=all`). */
  withWorker?: boolean;
  /** Extra modules, for tests. */
  imports?: ModuleMetadata['imports'];
}

/** The api role: HTTP controllers of every area, on top of the shared core. */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig, options: AppModuleOptions = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CoreModule.forRoot(config),
        ...API_AREAS,
        ...(options.withWorker ? [WorkerModule.forRoot(config, { embedded: true })] : []),
        ...(options.imports ?? []),
      ],
      providers: [{ provide: APP_FILTER, useClass: ErrorEnvelopeFilter }, HttpDrain],
    };
  }
}
