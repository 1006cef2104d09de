import { DataSourceOptions } from 'typeorm';
import { TransactionEndSubscriber } from './after-transaction';
import { MIGRATIONS } from './migrations';

export function dataSourceOptions(databaseUrl: string, entities: DataSourceOptions['entities'] = []): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    entities,
    migrations: MIGRATIONS,
    // `afterTransaction`'s work runs when a transaction ends.
    subscribers: [TransactionEndSubscriber],
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'all',
    synchronize: false,
    extra: { max: 10, connectionTimeoutMillis: 5000 },
  };
}
