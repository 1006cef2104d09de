import { Inject, Injectable } from '@nestjs/common';
import { REDIS } from '../../infra/redis/redis.module';
import type { RedisClient } from '../../infra/redis/redis-client';
import { HealthRepository } from './health.repository';

export type CheckState = 'up' | 'down';
export interface Readiness {
  status: 'ok' | 'unavailable';
  checks: { database: CheckState; redis: CheckState };
}

const CHECK_TIMEOUT_MS = 1_000;

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), ms);
    promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}

@Injectable()
export class HealthService {
  constructor(
    private readonly database: HealthRepository,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  async readiness(): Promise<Readiness> {
    const [database, redis] = await Promise.all([this.check(() => this.database.ping()), this.check(() => this.redis.ping())]);
    return { status: database === 'up' && redis === 'up' ? 'ok' : 'unavailable', checks: { database, redis } };
  }

  private async check(probe: () => Promise<unknown>): Promise<CheckState> {
    try {
      await within(probe(), CHECK_TIMEOUT_MS);
      return 'up';
    } catch {
      return 'down';
    }
  }
}
