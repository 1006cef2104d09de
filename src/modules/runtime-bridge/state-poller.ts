import { Inject, Injectable, Logger } from '@nestjs/common';
import { ProblemError } from '../../common/errors/problem-error';
import { VersionLifecycle } from '../packages/version-lifecycle.service';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { newId } from '../../common/ids';
import { REDIS } from '../../infra/redis/redis.module';
import type { RedisClient } from '../../infra/redis/redis-client';
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
/** Consecutive failed state polls of one package that count as "sustained health check failures". */
export const HEALTH_FAILURES_BEFORE_SUSPENSION = 20;

@Injectable()
export class StatePoller {
  private readonly logger = new Logger(StatePoller.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly installs: InstallsService,
    private readonly executor: CapabilityExecutor,
    private readonly cache: StateCache,
    private readonly lifecycle: VersionLifecycle,
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
          // Package health signal: consecutive poll failures; sustained failure suspends the package.
          const failures = await this.redis.incr(`${this.config.redisPrefix}:health:${target.package_id}:poll-failures`);
          if (failures === HEALTH_FAILURES_BEFORE_SUSPENSION) await this.suspendUnhealthy(target.package_id, failures);
          this.logger.debug(`state poll of ${capability.name} for ${target.install_id} failed: ${(error as Error).message}`);
          continue;
        }
        await this.redis.del(`${this.config.redisPrefix}:health:${target.package_id}:poll-failures`);
      }
    }
    return { polled, failed };
  }

  private async suspendUnhealthy(packageId: string, failures: number): Promise<void> {
    await this.lifecycle
      .suspend(packageId, {
        reason: 'health_check_failures',
        message: `The runtime failed ${failures} consecutive state polls`,
        remediation: 'Fix the runtime, run a full conformance validation, then contact support to request reinstatement',
      })
      .catch((error: unknown) => {
        if (!(error instanceof ProblemError && error.code === 'conflict')) throw error; // already suspended
      });
    this.logger.warn({ packageId, failures }, 'package suspended after sustained health check failures');
  }
}
