import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { REDIS } from '../../infra/redis/redis.module';

/** Drops expired holders, then takes a slot when fewer than the limit are held. */
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZSCORE', KEYS[1], ARGV[3]) then return 1 end
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  return 1
end
return 0`;

/**
 * Per-endpoint concurrency limit shared by every worker process: a sorted set
 * of holders scored by when their hold expires, so a worker killed mid-request
 * frees its slot after the longest delivery timeout instead of never.
 */
@Injectable()
export class EndpointSlots {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async acquire(appId: string, holder: string, holdMs: number): Promise<boolean> {
    const now = Date.now();
    const result = await this.redis.eval(
      ACQUIRE,
      1,
      this.key(appId),
      now,
      now + holdMs,
      holder,
      this.config.webhooks.endpointConcurrency,
      holdMs,
    );
    return result === 1;
  }

  async release(appId: string, holder: string): Promise<void> {
    await this.redis.zrem(this.key(appId), holder);
  }

  private key(appId: string): string {
    return `${this.config.redisPrefix}:webhook-slots:${appId}`;
  }
}
