import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { canonicalJson } from '../../common/json';
import { REDIS } from '../../infra/redis/redis.module';
import type { RedisClient } from '../../infra/redis/redis-client';
import { ProblemError } from '../../common/errors/problem-error';
import { newId } from '../../common/ids';
import { RateLimits } from '../../common/rate-limit/rate-limits.service';
import { ExecutionTarget, InstallsService } from '../marketplace/installs.service';
import { CapabilityDescriptor, CapabilityMode } from '@soul-service/rules';
import { ActionConfirmations, CONFIRMATION_LIFETIME_MINUTES } from './action-confirmations.service';
import { TierLimits, tierLimits } from '../../common/app-tiers';
import { limitExceeded } from './bridge-limits';
import { CapabilitySchemas } from './capability-schemas';
import { ExecuteCapabilityDto } from './dto/execute.dto';
import { ExecutionFailure } from './execution-failure';
import { ExecutionTraces, PhaseClock, TraceInput } from './execution-traces.service';
import { RealtimeSubscriptions } from './realtime-subscriptions.service';
import { InvokeOptions, RuntimeInvoker } from './runtime-invoker.service';
import { CachedCopies, CachedState, StateCache } from './state-cache';
import { DevSessions } from './dev-sessions.service';

/** Who asked for an execution: a signed-in user on their install, or an app with `capabilities:execute`. */
export type CapabilityCaller =
  | { kind: 'user'; userId: string }
  /** An app token; one delegated by a user's install acts on that install alone. */
  | { kind: 'app'; appId: string; delegation?: { userId: string; installId: string } };

/**
 * What an execution came to, for the controller to answer: `answered` (state,
 * history: the runtime's data now) or `accepted` (action: a confirmation the
 * user decides later; realtime: a subscription whose events follow).
 */
export interface ExecutionOutcome {
  kind: 'answered' | 'accepted';
  body: Record<string, unknown>;
}

/** Which per-minute limit of the app's tier counts the executions of a mode (realtime and webhook have none here). */
const PER_MINUTE: Partial<Record<CapabilityMode, keyof TierLimits>> = {
  state: 'statePerMinute',
  action: 'actionPerMinute',
  history: 'historyPerMinute',
};

/**
 * The execution lifecycle of every capability call, in four phases:
 * **accept** (request id, authorisation, suspension, rate limit), **resolve**
 * (descriptor of the installed version, install credentials, execution
 * context), **invoke** (the runtime call with retries) and **deliver**
 * (envelope and schema checks, cache or relay, trace and domain event).
 */
@Injectable()
export class CapabilityExecutor {
  constructor(
    private readonly installs: InstallsService,
    private readonly limits: RateLimits,
    private readonly invoker: RuntimeInvoker,
    private readonly traces: ExecutionTraces,
    private readonly cache: StateCache,
    private readonly confirmations: ActionConfirmations,
    private readonly realtime: RealtimeSubscriptions,
    private readonly devSessions: DevSessions,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async execute(
    caller: CapabilityCaller,
    packageId: string,
    capabilityName: string,
    input: ExecuteCapabilityDto,
  ): Promise<ExecutionOutcome> {
    const clock = new PhaseClock();
    clock.enter('accept');
    const requestId = newId('req');
    const target = await this.authorise(caller, packageId, input);
    const capability = target.capabilities.find((c) => c.name === capabilityName);
    if (!capability)
      throw new ProblemError('not_found', `Package ${packageId} has no capability ${capabilityName} in the installed version`);
    // The cached copies of a state capability are read while the limit is counted (one Redis round trip of latency, not two);
    // they are only used once the limit has admitted the call.
    const cached = capability.type === 'state' ? this.cache.getCopies(target.install_id, capability.name) : undefined;
    cached?.catch(() => undefined);
    await this.consumeLimit(target, capability);

    clock.enter('resolve');
    const context = {
      userId: target.user_id,
      installId: target.install_id,
      locale: input.context?.locale ?? 'en',
      timezone: input.context?.timezone ?? 'UTC',
    };
    switch (capability.type) {
      case 'state':
        return {
          kind: 'answered',
          body: await this.state(requestId, clock, target, capability, input.params ?? {}, context, 'api', cached),
        };
      case 'history':
        return { kind: 'answered', body: await this.history(requestId, clock, target, capability, input.params ?? {}, context) };
      case 'action': {
        const actionInput = input.input ?? {};
        // Checked before the confirmation exists: the user is never asked to confirm input the runtime must refuse.
        CapabilitySchemas.assertRequest(capability, actionInput);
        const key = input.idempotencyKey || (await this.derivedIdempotencyKey(caller, target, capability, actionInput));
        const pending = await this.confirmations.create(requestId, target, capability, actionInput, key, caller.kind);
        await this.trace(requestId, clock, target, capability, 'api', 'pending');
        return { kind: 'accepted', body: pending };
      }
      case 'realtime': {
        const subscription = await this.realtime.subscribe(target, capability);
        await this.trace(requestId, clock, target, capability, 'api', 'pending');
        return { kind: 'accepted', body: { requestId, status: 'subscribed', capability: capability.name, ...subscription } };
      }
      default:
        throw new ProblemError(
          'bad_request',
          `${capabilityName} is a webhook capability: the provider pushes its events to POST /v1/providers/runtime/webhook`,
        );
    }
  }

  /** Calls a state capability (or serves the cached copy while its ttl lasts) and caches the answer. Used by the API and the poller. */
  async state(
    requestId: string,
    clock: PhaseClock,
    target: ExecutionTarget,
    capability: CapabilityDescriptor,
    params: Record<string, unknown>,
    context: Record<string, string>,
    trigger: 'api' | 'poll',
    /** The cached copies, already being read by the caller (API calls); polls always call the runtime. */
    cachedRead?: Promise<CachedCopies>,
    /** Polls are queued work: retries are scheduled by the poller, not waited for (see `InvokeOptions`). */
    invokeOptions: InvokeOptions = {},
  ) {
    CapabilitySchemas.assertRequest(capability, params);
    // While `soul dev` serves the developer's own install, every call reaches their machine and nothing it
    // answers is kept: the cache holds only what the published runtime said.
    const viaDev = await this.devSessions.routes(target);
    const copies = viaDev ? undefined : await cachedRead;
    const cached = copies?.last;
    if (StateCache.isFresh(cached, params)) {
      this.traceAfterAnswer(requestId, clock, target, capability, trigger, 'cached');
      return {
        requestId,
        status: 'ok',
        data: cached.data,
        ttl: cached.ttl,
        metadata: cached.metadata,
        fetchedAt: cached.fetchedAt,
        cached: true,
        stale: false,
      };
    }
    const body = { capability: capability.name, mode: 'state', params, context };
    const success = await this.invoke(
      requestId,
      clock,
      target,
      capability,
      trigger,
      body,
      { 'X-Service-User-Id': target.user_id },
      invokeOptions,
    );
    clock.enter('deliver');
    const entry = {
      data: success.body.data as Record<string, unknown>,
      params,
      ttl: typeof success.body.ttl === 'number' ? success.body.ttl : 0,
      metadata: success.body.metadata,
      fetchedAt: new Date().toISOString(),
      degraded: success.status === 'degraded',
      source: 'state' as const,
    };
    // An API call is answered without waiting for the cache write (`StateCache.storeInBackground`); a poll waits for it.
    let stored: Pick<CachedState, 'data' | 'ttl' | 'metadata' | 'fetchedAt'>;
    try {
      stored = viaDev
        ? entry
        : copies
          ? this.cache.storeInBackground(target.install_id, capability.name, entry, copies)
          : await this.cache.store(target.install_id, capability.name, entry);
    } finally {
      // The trace does not hold the answer (see `ExecutionTraces.recordAfterAnswer`); the answer is what the cache stored.
      // Its statement starts after the cache write was sent (a poll: acknowledged).
      this.traceAfterAnswer(requestId, clock, target, capability, trigger, success.status, success.attempts);
    }
    return {
      requestId,
      status: success.status,
      data: stored.data,
      ttl: stored.ttl,
      metadata: stored.metadata,
      fetchedAt: stored.fetchedAt,
      cached: false,
      stale: false,
      ...(success.status === 'degraded' ? { degraded: true, error: success.body.error } : {}),
    };
  }

  private async history(
    requestId: string,
    clock: PhaseClock,
    target: ExecutionTarget,
    capability: CapabilityDescriptor,
    params: Record<string, unknown>,
    context: Record<string, string>,
  ) {
    CapabilitySchemas.assertRequest(capability, params);
    const body = { capability: capability.name, mode: 'history', params, context };
    const success = await this.invoke(requestId, clock, target, capability, 'api', body, {});
    this.traceAfterAnswer(requestId, clock, target, capability, 'api', success.status, success.attempts);
    const cursor = success.body.cursor as { next?: unknown; hasMore: boolean };
    return {
      requestId,
      status: success.status,
      items: success.body.items,
      // The cursor is the runtime's, opaque to the service: passed through untouched.
      cursor: { next: cursor.next ?? null, hasMore: cursor.hasMore },
      totalCount: success.body.totalCount ?? null,
      ...(success.status === 'degraded' ? { degraded: true, error: success.body.error } : {}),
    };
  }

  /** Runs a confirmed action on the runtime with its idempotency key; traced like every other call. */
  async runAction(
    requestId: string,
    target: ExecutionTarget,
    capability: CapabilityDescriptor,
    input: Record<string, unknown>,
    confirmationId: string,
    idempotencyKey: string,
  ) {
    const clock = new PhaseClock();
    clock.enter('resolve');
    // Checked again at confirmation: the install may run a newer version whose schema this input no longer matches.
    CapabilitySchemas.assertRequest(capability, input);
    const body = { capability: capability.name, mode: 'action', input, context: { userId: target.user_id, confirmationId } };
    const success = await this.invoke(requestId, clock, target, capability, 'confirmation', body, {
      'X-Service-Idempotency-Key': idempotencyKey,
    });
    await this.trace(requestId, clock, target, capability, 'confirmation', success.status, success.attempts);
    return success;
  }

  /** Phase three; a failure is traced (with `capability.failed`) before it reaches the caller. */
  private async invoke(
    requestId: string,
    clock: PhaseClock,
    target: ExecutionTarget,
    capability: CapabilityDescriptor,
    trigger: 'api' | 'confirmation' | 'poll',
    body: Record<string, unknown>,
    headers: Record<string, string>,
    options: InvokeOptions = {},
  ) {
    clock.enter('invoke');
    try {
      return await this.invoker.execute(target, capability, body, { 'X-Service-Request-Id': requestId, ...headers }, options);
    } catch (error) {
      const failure =
        error instanceof ExecutionFailure
          ? error
          : new ExecutionFailure('execution_failed', `The execution failed: ${(error as Error).message}`, 'execution_failed', false);
      await this.trace(
        requestId,
        clock,
        target,
        capability,
        trigger,
        'failed',
        typeof failure.extras.attempts === 'number' ? failure.extras.attempts : 1,
        { code: failure.errorCode, message: failure.detail, retriesExhausted: failure.retriesExhausted },
      );
      failure.extras.request_id = requestId;
      throw failure;
    }
  }

  /**
   * The end of every execution, whatever its outcome: enters the deliver phase
   * and writes the trace (with `capability.invoked` / `capability.failed` when
   * the runtime was invoked).
   */
  /** A read's trace, written without holding its answer (`ExecutionTraces.recordAfterAnswer`). */
  private traceAfterAnswer(...args: TraceArgs): void {
    this.traces.recordAfterAnswer(traceInput(...args));
  }

  private async trace(...args: TraceArgs): Promise<void> {
    await this.traces.record(traceInput(...args));
  }

  /** Accept phase: the caller's right to act on the install, and the package and its developer not suspended. */
  private async authorise(caller: CapabilityCaller, packageId: string, input: ExecuteCapabilityDto): Promise<ExecutionTarget> {
    let target: ExecutionTarget | undefined;
    if (caller.kind === 'user') {
      target = await this.installs.executionTarget({ userId: caller.userId, packageId });
      if (!target) throw new ProblemError('not_found', `You have no active install of package ${packageId}`);
    } else if (caller.delegation) {
      const { installId, userId } = caller.delegation;
      if ((input.installId && input.installId !== installId) || (input.userId && input.userId !== userId)) {
        throw new ProblemError('insufficient_scope', `This token acts for install ${installId} only`);
      }
      // The guard found the install active a moment ago; an uninstall since then finds nothing here.
      target = await this.installs.executionTarget({ installId });
      if (!target || target.package_id !== packageId)
        throw new ProblemError('not_found', `The install this token acts for has no active install of package ${packageId}`);
      if (target.app_id !== caller.appId) throw new ProblemError('insufficient_scope', `Package ${packageId} belongs to another app`);
    } else {
      if (!input.installId && !input.userId) {
        throw new ProblemError('missing_field', 'An app token must name the install (installId) or the user (userId) to act for', {
          field: 'installId',
        });
      }
      target = input.installId
        ? await this.installs.executionTarget({ installId: input.installId })
        : await this.installs.executionTarget({ userId: input.userId!, packageId });
      if (!target || target.package_id !== packageId)
        throw new ProblemError('not_found', `No active install of package ${packageId} for that user`);
      if (target.app_id !== caller.appId) throw new ProblemError('insufficient_scope', `Package ${packageId} belongs to another app`);
    }
    if (target.package_suspended || target.developer_suspended) {
      throw new ProblemError('account_suspended', `Package ${packageId} is suspended; its capabilities cannot be executed`);
    }
    return target;
  }

  /**
   * The idempotency key of an action executed without one: stable over the
   * caller, the install, the capability and the canonical input, so an app
   * retrying a call gets the same confirmation back instead of a duplicate. It
   * holds for the confirmation lifetime from the first call (a sliding anchor
   * in Redis, so a retry is never split from its first call by a window
   * boundary); afterwards the same input starts a new confirmation
   * (docs/decisions.md, "Derived idempotency key").
   */
  private async derivedIdempotencyKey(
    caller: CapabilityCaller,
    target: ExecutionTarget,
    capability: CapabilityDescriptor,
    input: Record<string, unknown>,
  ): Promise<string> {
    const who = caller.kind === 'user' ? `user:${caller.userId}` : `app:${caller.appId}`;
    const digest = createHash('sha256')
      .update([who, target.install_id, capability.name, canonicalJson(input)].join('\n'))
      .digest('base64url');
    const anchor = `${this.config.redisPrefix}:idem-derived:${digest}`;
    const fresh = `idem_${digest.slice(0, 32)}_${Date.now().toString(36)}`;
    if ((await this.redis.set(anchor, fresh, 'EX', CONFIRMATION_LIFETIME_MINUTES * 60, 'NX')) === 'OK') return fresh;
    return (await this.redis.get(anchor)) ?? fresh;
  }

  private async consumeLimit(target: ExecutionTarget, capability: CapabilityDescriptor): Promise<void> {
    const limit = PER_MINUTE[capability.type];
    if (!limit) return;
    const points = tierLimits(target.app_tier)[limit];
    try {
      // One limiter per size, all counting in the same Redis key (the prefix is the rule's name, not its size):
      // an app moved to another tier keeps what it has used in the current minute, measured against its new limit.
      await this.limits.limiter(`bridge:${capability.type}`, points, 60).consume(`${target.app_id}:${target.user_id}:${capability.name}`);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      throw limitExceeded(
        `More than ${points} ${capability.type} executions per minute of ${capability.name} for this user and app`,
        Math.ceil(rejection.msBeforeNext / 1000),
      );
    }
  }
}

type TraceArgs = [
  requestId: string,
  clock: PhaseClock,
  target: ExecutionTarget,
  capability: CapabilityDescriptor,
  trigger: TraceInput['trigger'],
  outcome: TraceInput['outcome'],
  attempts?: number,
  error?: TraceInput['error'],
];

/** What a trace records of a call; its clock enters the deliver phase. */
function traceInput(...[requestId, clock, target, capability, trigger, outcome, attempts = 0, error]: TraceArgs): TraceInput {
  clock.enter('deliver');
  return { requestId, target, capability: capability.name, mode: capability.type, trigger, outcome, clock, attempts, error };
}
