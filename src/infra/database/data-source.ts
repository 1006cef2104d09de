/**
 * DataSource for the TypeORM CLI (`npm run migration:generate|run|revert`), which
 * loads the compiled file from `dist/`. The application itself builds its
 * connection in DatabaseModule.
 */
import 'reflect-metadata';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../config/app-config';
import { dataSourceOptions } from './data-source-options';

export default new DataSource(dataSourceOptions(loadConfig().databaseUrl, [join(__dirname, '../../**/*.entity.js')]));
