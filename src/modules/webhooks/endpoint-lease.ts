import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { REDIS } from '../../infra/redis/redis.module';
import type { RedisClient } from '../../infra/redis/redis-client';

/**
 * Takes the lease, or leaves a note that there is more to send. A job re-run
 * after its worker died (same holder) takes its own lease over at once.
 * KEYS: lease, more. ARGV: holder, lease ms.
 */
const TAKE_OR_NOTE = `
local current = redis.call('GET', KEYS[1])
if current == false or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
return 0`;

/**
 * Gives the lease up unless someone noted more work meanwhile; in that case
 * the note is consumed and the holder keeps the lease and drains again.
 * KEYS: lease, more. ARGV: holder, lease ms.
 */
const RELEASE_UNLESS_MORE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if redis.call('DEL', KEYS[2]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
redis.call('DEL', KEYS[1])
return 0`;

/** Extends the lease while its holder still has it. KEYS: lease. ARGV: holder, lease ms. */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

/** Gives the lease up for good (the drain ran its time); the note goes too, the caller schedules what is left. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1], KEYS[2])
end
return 0`;

/**
 * One drainer per webhook endpoint across every worker process: a Redis
 * lease held by the drain job that sends the endpoint's deliveries. A drain
 * job that finds the lease taken leaves a note ("more") and ends at once; the
 * holder consumes the note before it gives the lease up and drains again, so
 * a delivery committed while another job drains is never left behind. Both
 * moves are single Lua scripts, so no note can fall between a holder's last
 * look and its release.
 *
 * The lease lapses after `ms` (longer than the longest delivery timeout)
 * unless renewed, so a worker killed mid-drain holds its endpoint only that
 * long; the job BullMQ re-runs for it has the same holder id and takes over.
 */
@Injectable()
export class EndpointLease {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** True when `holder` now drains the endpoint; false when another does (and will see the note). */
  async takeOrNote(endpointId: string, holder: string, ms: number): Promise<boolean> {
    return (await this.redis.eval(TAKE_OR_NOTE, 2, ...this.keys(endpointId), holder, ms)) === 1;
  }

  /** True when work was noted meanwhile (the holder keeps the lease and drains again); false when released. */
  async releaseUnlessMore(endpointId: string, holder: string, ms: number): Promise<boolean> {
    return (await this.redis.eval(RELEASE_UNLESS_MORE, 2, ...this.keys(endpointId), holder, ms)) === 1;
  }

  async renew(endpointId: string, holder: string, ms: number): Promise<boolean> {
    return (await this.redis.eval(RENEW, 1, this.keys(endpointId)[0], holder, ms)) === 1;
  }

  async release(endpointId: string, holder: string): Promise<void> {
    await this.redis.eval(RELEASE, 2, ...this.keys(endpointId), holder);
  }

  /** Both keys in one hash slot (Redis Cluster runs a script on one node). */
  private keys(endpointId: string): [string, string] {
    const base = `${this.config.redisPrefix}:webhook-drain:{${endpointId}}`;
    return [`${base}:lease`, `${base}:more`];
  }
}
