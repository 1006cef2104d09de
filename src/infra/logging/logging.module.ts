import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppLogger, ROOT_LOGGER } from './app-logger';
import { createRootLogger } from './root-logger';

/** The root pino logger and Nest's logger on it, for both roles. */
@Global()
@Module({})
export class LoggingModule {
  static forRoot(options: { level: string; role: string }): DynamicModule {
    return {
      module: LoggingModule,
      providers: [{ provide: ROOT_LOGGER, useValue: createRootLogger(options) }, AppLogger],
      exports: [ROOT_LOGGER, AppLogger],
    };
  }
}
