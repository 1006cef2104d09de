import { Inject, Injectable, Logger } from '@nestjs/common';
import { ProblemError } from '../../common/errors/problem-error';
import { VersionLifecycle } from '../packages/version-lifecycle.service';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { newId } from '../../common/ids';
import { REDIS } from '../../infra/redis/redis.module';
import type { RedisClient } from '../../infra/redis/redis-client';
import { ExecutionTarget, InstallsService } from '../marketplace/installs.service';
import { CapabilityDescriptor, widgetParams } from '@soul-service/rules';
import { CapabilityExecutor } from './capability-executor.service';
import { ExecutionFailure } from './execution-failure';
import { PhaseClock } from './execution-traces.service';
import { StateCache } from './state-cache';

/** Consecutive failed state polls of one package that count as "sustained health check failures". */
export const HEALTH_FAILURES_BEFORE_SUSPENSION = 20;
/** Poll period of a state capability that declares no `refreshInterval` (stored descriptors normally carry one). */
export const DEFAULT_REFRESH_INTERVAL_SECONDS = 300;

/** What one run of the poller did: capabilities polled, and of those the ones that failed or were deferred. */
export interface PollCounts {
  polled: number;
  failed: number;
  deferred: number;
}

/** The widget params of a state capability (the schema's defaults): moved to the descriptors leaf, which conformance shares. */
export { widgetParams };

/**
 * The worker's state polling scheduler. Every state capability of every active
 * install is polled from the install on (its own `poll-install` job, run as
 * soon as the install commits; see `pollInstall`), then every
 * `refreshInterval`, with its widget params (`widgetParams`), through the same
 * execution pipeline as an API call, into the widget copy of the cache; an
 * uninstalled (or suspended) install drops out of the active set and is no
 * longer polled. Failures leave the cached copy in place (served, then marked
 * stale) and count towards the package's health signal; a retryable runtime
 * error moves the capability's next poll to the retry's delay instead.
 */
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

  /** One tick: every state capability of every active install whose poll is due. */
  async pollDue(): Promise<PollCounts> {
    const counts: PollCounts = { polled: 0, failed: 0, deferred: 0 };
    for (const target of await this.installs.activeTargets()) await this.pollTarget(target, counts);
    return counts;
  }

  /**
   * The first state of one install, at once (job `poll-install`, recorded with
   * the install's commit, or with a version change): its state capabilities
   * that are due, exactly as a tick would poll them, so the next tick does not
   * poll them again. Nothing when the install is no longer active.
   */
  async pollInstall(installId: string): Promise<PollCounts> {
    const counts: PollCounts = { polled: 0, failed: 0, deferred: 0 };
    const target = await this.installs.executionTarget({ installId });
    if (target) await this.pollTarget(target, counts);
    return counts;
  }

  private async pollTarget(target: ExecutionTarget, counts: PollCounts): Promise<void> {
    if (target.package_suspended || target.developer_suspended) return;
    for (const capability of target.capabilities) {
      if (capability.type !== 'state') continue;
      const outcome = await this.pollIfDue(target, capability);
      if (!outcome) continue;
      counts.polled += 1;
      if (outcome !== 'polled') counts[outcome] += 1;
    }
  }

  /**
   * Polls one state capability of one install when it is due, into the widget
   * copy; undefined when it was not due (or has no widget params). The due key
   * is the one schedule of the pair, shared by the tick and the install's own
   * poll, whatever the number of workers.
   */
  private async pollIfDue(target: ExecutionTarget, capability: CapabilityDescriptor): Promise<keyof PollCounts | undefined> {
    const intervalMs = (capability.refreshInterval ?? DEFAULT_REFRESH_INTERVAL_SECONDS) * 1000;
    const cached = await this.cache.getWidget(target.install_id, capability.name);
    if (cached && Date.now() - cached.attemptedAt < intervalMs) return undefined;
    // The schedule of one install's capability: due when this key is gone. Set for one interval per poll (whatever
    // the number of workers), or for a retry's delay when the runtime asked to be called again later.
    const due = `${this.config.redisPrefix}:state-poll:${target.install_id}:${capability.name}`;
    if ((await this.redis.set(due, '1', 'PX', Math.max(intervalMs - 50, 50), 'NX')) !== 'OK') return undefined;
    const params = widgetParams(capability);
    // The schema requires a param without a default: no widget params, nothing to poll with.
    if (!params) return undefined;
    const retriesKey = `${this.config.redisPrefix}:state-poll-retries:${target.install_id}:${capability.name}`;
    const retriesDone = Number(await this.redis.get(retriesKey)) || 0;
    try {
      const clock = new PhaseClock();
      clock.enter('resolve');
      const answer = await this.executor.state(
        newId('req'),
        clock,
        target,
        capability,
        params,
        { userId: target.user_id, installId: target.install_id, locale: 'en', timezone: 'UTC' },
        'poll',
        undefined,
        { queued: true, retriesDone },
      );
      await this.cache.storeWidget(target.install_id, capability.name, {
        data: answer.data,
        params,
        ttl: answer.ttl,
        metadata: answer.metadata,
        fetchedAt: answer.fetchedAt,
        degraded: answer.status === 'degraded',
        source: 'state',
      });
    } catch (error) {
      if (error instanceof ExecutionFailure && error.retryInMs !== undefined) {
        // Queued work waits the full delay (retryAfter first, up to 5 minutes): the next poll of this capability
        // is moved to then, without holding the worker; the cached copy stays as it is meanwhile.
        await this.redis.set(retriesKey, String(retriesDone + 1), 'PX', error.retryInMs + intervalMs + 60_000);
        await this.redis.set(due, '1', 'PX', Math.max(error.retryInMs, 50));
        return 'deferred';
      }
      await this.redis.del(retriesKey);
      await this.cache.markFailure(target.install_id, capability.name);
      // Package health signal: consecutive poll failures; sustained failure suspends the package.
      const failures = await this.redis.incr(`${this.config.redisPrefix}:health:${target.package_id}:poll-failures`);
      if (failures === HEALTH_FAILURES_BEFORE_SUSPENSION) await this.suspendUnhealthy(target.package_id, failures);
      this.logger.debug(`state poll of ${capability.name} for ${target.install_id} failed: ${(error as Error).message}`);
      return 'failed';
    }
    if (retriesDone > 0) await this.redis.del(retriesKey);
    await this.redis.del(`${this.config.redisPrefix}:health:${target.package_id}:poll-failures`);
    return 'polled';
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
