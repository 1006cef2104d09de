import { Inject, Injectable, Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { newId } from '../../common/ids';
import { REDIS } from '../../infra/redis/redis.module';
import { InstallsService } from '../marketplace/installs.service';
import { CapabilityExecutor } from './capability-executor.service';
import { PhaseClock } from './execution-traces.service';
import { StateCache } from './state-cache';

/**
 * The worker's state polling scheduler: on every tick, each state capability
 * of each active install whose cached copy is older than its
 * `refreshInterval` is refreshed through the same execution pipeline as an
 * API call. Failures leave the cached copy in place (served, then marked
 * stale) and count towards the package's health signal.
 */
@Injectable()
export class StatePoller {
  private readonly logger = new Logger(StatePoller.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly installs: InstallsService,
    private readonly executor: CapabilityExecutor,
    private readonly cache: StateCache,
  ) {}

  async pollDue(): Promise<{ polled: number; failed: number }> {
    let polled = 0;
    let failed = 0;
    for (const target of await this.installs.activeTargets()) {
      if (target.package_suspended || target.developer_suspended) continue;
      for (const capability of target.capabilities) {
        if (capability.type !== 'state' || !capability.refreshInterval) continue;
        const cached = await this.cache.get(target.install_id, capability.name);
        // Never asked for yet: poll with the first example's params when the descriptor has one, else wait for a first call.
        const exampleParams = (capability.examples?.[0] as { params?: Record<string, unknown> } | undefined)?.params;
        const params = cached?.source === 'state' ? cached.params : exampleParams;
        if (!params) continue;
        if (cached && Date.now() - cached.attemptedAt < capability.refreshInterval * 1000) continue;
        // One poll per install and capability per interval, however many workers tick.
        const lock = `${this.config.redisPrefix}:state-poll:${target.install_id}:${capability.name}`;
        if ((await this.redis.set(lock, '1', 'PX', Math.max(capability.refreshInterval * 1000 - 50, 50), 'NX')) !== 'OK') continue;
        polled += 1;
        try {
          const clock = new PhaseClock();
          clock.enter('resolve');
          await this.executor.state(
            newId('req'),
            clock,
            target,
            capability,
            params,
            { userId: target.user_id, installId: target.install_id, locale: 'en', timezone: 'UTC' },
            'poll',
          );
        } catch (error) {
          failed += 1;
          await this.cache.markFailure(target.install_id, capability.name);
          // Package health signal: consecutive poll failures, read by automatic suspension.
          await this.redis.incr(`${this.config.redisPrefix}:health:${target.package_id}:poll-failures`);
          this.logger.debug(`state poll of ${capability.name} for ${target.install_id} failed: ${(error as Error).message}`);
          continue;
        }
        await this.redis.del(`${this.config.redisPrefix}:health:${target.package_id}:poll-failures`);
      }
    }
    return { polled, failed };
  }
}
