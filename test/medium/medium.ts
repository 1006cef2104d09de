import 'reflect-metadata';
import { ModuleMetadata, Type } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CoreModule } from '../../src/core.module';
import { Factories, factories } from '../support/factories';
import { TestEnvironment } from '../support/harness';

/**
 * One medium-test context per file (as immich's `test/medium`): an area's real
 * Nest module, with the shared core it needs (configuration, PostgreSQL,
 * Redis, queues, events, crypto), on a database cloned from the migrated
 * template and a Redis prefix of its own. Tests call the area's exported
 * services directly, without HTTP, and arrange rows with the factories.
 *
 * Only area modules are imported, never a service's collaborators one by one,
 * so the tests keep passing while the SQL behind a service moves into its
 * repositories.
 */
export interface MediumContext {
  module: TestingModule;
  dataSource: DataSource;
  make: Factories;
  get<T>(type: Type<T>): T;
  close(): Promise<void>;
}

export async function mediumContext(
  areas: NonNullable<ModuleMetadata['imports']>,
  env: Record<string, string> = {},
): Promise<MediumContext> {
  const environment = await TestEnvironment.create(env);
  try {
    const module = await Test.createTestingModule({
      imports: [CoreModule.forRoot(environment.config({ APP_ROLE: 'api' })), ...areas],
    }).compile();
    await module.init();
    const dataSource = module.get<DataSource>(getDataSourceToken());
    return {
      module,
      dataSource,
      make: factories(dataSource),
      get: <T>(type: Type<T>) => module.get(type, { strict: false }),
      close: async () => {
        await module.close();
        await environment.close();
      },
    };
  } catch (error) {
    await environment.close();
    throw error;
  }
}
