import { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from './migrations';

export function dataSourceOptions(databaseUrl: string, entities: DataSourceOptions['entities'] = []): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    entities,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'all',
    synchronize: false,
    extra: { max: 10, connectionTimeoutMillis: 5000 },
  };
}
