import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository } from '../../infra/database/sql-repository';

/** PostgreSQL as the readiness check sees it: no table, one round trip on a pooled connection. */
@Injectable()
export class HealthRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** Resolves when PostgreSQL answers a trivial statement. */
  async ping(): Promise<void> {
    await this.execute('SELECT 1');
  }
}
