import { Inject, Injectable } from '@nestjs/common';
import { OutboundHttp } from '../../common/http/outbound-http';
import { newId } from '../../common/ids';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import type { ExecutionTarget } from '../marketplace/installs.service';
import { CapabilityDescriptor, CapabilityMode } from '@soul-service/rules';
import { REQUEST_ID_HEADER, RuntimeCall, runtimeCallHeaders, RuntimeTokens } from '../access/runtime-tokens';
import { tierLimits } from '../../common/app-tiers';
import { MAX_RETRIES, retryDelayMs, runtimeTimeoutMs } from './bridge-limits';
import { ExecutionFailure, RUNTIME_CODE_PROBLEMS } from './execution-failure';
import { CapabilitySchemas } from './capability-schemas';
import { callRuntime } from './runtime-caller';
import { isObject } from '../../common/json';
import { DevSessions } from './dev-sessions.service';

/** A runtime answer that passed the envelope and schema checks. */
export interface RuntimeSuccess {
  status: 'ok' | 'degraded';
  body: Record<string, unknown>;
  attempts: number;
}

/**
 * How a caller waits for retries (docs/decisions.md, "retry-budget rule"): a
 * synchronous call retries in-request only while a retry fits in what is left
 * of `RUNTIME_RETRY_BUDGET_MS`; queued work (state polls) never sleeps in the
 * worker and is handed the delay to schedule instead.
 */
export interface InvokeOptions {
  queued?: boolean;
  /** Retries queued work already made for this call (the backoff schedule and the limit of 3 continue from it). */
  retriesDone?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether the call carries the runtime contract's `X-Service-Idempotency-Key` (header names are case-insensitive). */
const hasIdempotencyKey = (headers: Record<string, string>) =>
  Object.entries(headers).some(([name, value]) => name.toLowerCase() === 'x-service-idempotency-key' && value !== '');

/**
 * Phase three (invoke) and the envelope half of phase four (deliver) of the
 * execution lifecycle: calls `POST <runtimeUrl>/capabilities/<name>/execute`
 * with a runtime token and the contract headers, applies the
 * retry semantics of the runtime error envelope, and checks the success
 * envelope and the declared response schema.
 */
@Injectable()
export class RuntimeInvoker {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tokens: RuntimeTokens,
    private readonly http: OutboundHttp,
    private readonly devSessions: DevSessions,
  ) {}

  /** What the runtime token of a live call to this install states (docs/runtime-auth.md): live installs are always `livemode`. */
  static liveCall(target: ExecutionTarget, requestId: string): RuntimeCall {
    return {
      appId: target.app_id,
      userId: target.user_id,
      installId: target.install_id,
      requestId,
      scopes: target.scopes,
      livemode: true,
    };
  }

  /**
   * `Authorization` (a runtime token minted for this request, never persisted
   * or logged), `X-Service-Request-Id` and `X-Service-Livemode: true` of a live
   * call (executions, polls, realtime streams).
   */
  async liveHeaders(target: ExecutionTarget, requestId: string): Promise<Record<string, string>> {
    return this.tokens.headers(RuntimeInvoker.liveCall(target, requestId));
  }

  async execute(
    target: ExecutionTarget,
    capability: CapabilityDescriptor,
    body: Record<string, unknown>,
    headers: Record<string, string>,
    options: InvokeOptions = {},
  ): Promise<RuntimeSuccess> {
    const url = `${target.runtime_url}/capabilities/${encodeURIComponent(capability.name)}/execute`;
    const { retryBaseMs, retryBudgetMs } = this.config.runtimeBridge;
    // The app's tier sets how long its runtime may take and how large an answer may be.
    const timeoutMs = runtimeTimeoutMs(target.app_tier, this.config.runtimeBridge.timeoutMs);
    const maxBytes = tierLimits(target.app_tier).maxResponseBytes;
    const started = Date.now();
    const payload = JSON.stringify(body);
    // One token per request (its `rid` is the request id the runtime sees), reused by the retries of this request.
    const requestId = headers[REQUEST_ID_HEADER] ?? newId('req');
    const call = RuntimeInvoker.liveCall(target, requestId);
    let token = await this.tokens.mint(call);
    let refreshed = false;
    let retries = options.retriesDone ?? 0;
    // Safe to send twice when a kept-alive connection turns out closed: state and history reads, and actions,
    // which always carry the idempotency key the runtime contract makes the runtime honour.
    const retryStaleConnection = capability.type === 'state' || capability.type === 'history' || hasIdempotencyKey(headers);
    // The developer's own installs go to their machine while `soul dev` runs; every other call to the runtime URL.
    const transport = (await this.devSessions.transportFor(target)) ?? this.http;
    for (let attempts = 1; ; attempts += 1) {
      const result = await callRuntime(
        transport,
        url,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            ...headers,
            ...runtimeCallHeaders(token, requestId, call.livemode),
          },
          body: payload,
          retryStaleConnection,
        },
        { timeoutMs, maxBytes },
      );
      if (result.kind === 'timeout') {
        throw new ExecutionFailure(
          'capability_timeout',
          `The runtime did not answer within ${timeoutMs / 1000} s`,
          'capability_timeout',
          false,
        );
      }
      if (result.kind === 'unavailable') {
        throw new ExecutionFailure('runtime_unavailable', `The runtime is unreachable: ${result.detail}`, 'runtime_unavailable', false);
      }
      if (result.kind === 'oversize') throw new ExecutionFailure('execution_failed', result.detail, 'execution_failed', false);
      if (!result.jsonOk || !isObject(result.json)) {
        throw new ExecutionFailure(
          'execution_failed',
          `The runtime answered ${result.status} with ${result.contentType || 'no content type'} instead of a JSON object`,
          'execution_failed',
          false,
        );
      }
      const json = result.json;
      if (json.status === 'error' && isObject(json.error) && typeof json.error.code === 'string') {
        const code = json.error.code;
        const message = typeof json.error.message === 'string' ? json.error.message : code;
        const retryAfter = typeof json.error.retryAfter === 'number' ? json.error.retryAfter : result.retryAfterHeader;
        const known = RUNTIME_CODE_PROBLEMS[code];
        const runtimeError = {
          code,
          message,
          retryable: json.error.retryable === true,
          ...(retryAfter !== undefined ? { retryAfter } : {}),
        };
        if (code === 'AUTH_EXPIRED' && !refreshed) {
          // The token expired at the runtime (clock skew, revocation there): mint a fresh one (same rid, new jti) and retry once.
          refreshed = true;
          token = await this.tokens.mint(call);
          continue;
        }
        if (code === 'AUTH_INVALID') {
          // The runtime cannot verify the service's token at all (its issuer, audience or key set is misconfigured):
          // a fresh token or a retry would be refused the same way, and a re-authorization by the user cannot help.
          throw new ExecutionFailure(
            'runtime_unavailable',
            `The runtime refused the service's token as invalid (AUTH_INVALID: ${message}); its provider must fix how it verifies runtime tokens`,
            code,
            false,
            { runtime_error: runtimeError, attempts },
          );
        }
        if (code === 'AUTH_EXPIRED') {
          throw new ExecutionFailure(
            'runtime_unavailable',
            'The runtime refused a freshly issued install token; the user must re-authorize this package',
            code,
            true,
            { runtime_error: runtimeError, reauthorization_required: true },
          );
        }
        if (known?.retryable) {
          // retryAfter (envelope or header) takes precedence over the backoff schedule, up to the 5-minute maximum delay.
          const delay = retryDelayMs(retries, retryBaseMs, retryAfter);
          const retryAfterSeconds = Math.max(1, Math.ceil(delay / 1000));
          if (retries >= MAX_RETRIES) {
            throw new ExecutionFailure(
              known.problem,
              `The runtime answered ${code}: ${message} (after ${retries} retries)`,
              code,
              true,
              { runtime_error: runtimeError, attempts },
              code === 'RATE_LIMITED' ? { 'Retry-After': String(retryAfterSeconds) } : {},
            );
          }
          // In-request only while the wait and the next call's timeout fit in the budget, so the caller is answered in time.
          const budgetLeft = retryBudgetMs - (Date.now() - started);
          if (!options.queued && delay + timeoutMs <= budgetLeft) {
            retries += 1;
            await sleep(delay);
            continue;
          }
          throw this.deferred(code, message, runtimeError, attempts, delay, retryAfterSeconds, options.queued === true);
        }
        throw new ExecutionFailure(known?.problem ?? 'execution_failed', `The runtime answered ${code}: ${message}`, code, false, {
          runtime_error: runtimeError,
          attempts,
        });
      }
      if (result.status < 200 || result.status >= 300) {
        throw new ExecutionFailure(
          'execution_failed',
          `The runtime answered ${result.status} without the runtime error envelope`,
          'execution_failed',
          false,
        );
      }
      this.checkEnvelope(capability, json);
      return { status: json.status as 'ok' | 'degraded', body: json, attempts };
    }
  }

  /** The success envelope of the mode, and the declared response schema for `ok` answers. */
  private checkEnvelope(capability: CapabilityDescriptor, json: Record<string, unknown>): void {
    const fail = (detail: string, extras: Record<string, unknown> = {}) => {
      throw new ExecutionFailure(
        'execution_failed',
        `The runtime answer does not match the contract: ${detail}`,
        'execution_failed',
        false,
        extras,
      );
    };
    if (json.status !== 'ok' && json.status !== 'degraded') fail('status must be "ok" or "degraded"');
    const degraded = json.status === 'degraded';
    const mode: CapabilityMode = capability.type;
    if (mode === 'state') {
      if (!isObject(json.data)) fail('data must be an object');
      if (!degraded && (!Number.isInteger(json.ttl) || (json.ttl as number) < 0)) fail('ttl must be a non-negative integer');
    } else if (mode === 'action') {
      if (!isObject(json.result)) fail('result must be an object');
    } else if (mode === 'history') {
      if (!Array.isArray(json.items)) fail('items must be an array');
      if (!isObject(json.cursor) || typeof json.cursor.hasMore !== 'boolean') fail('cursor must be an object with hasMore');
    }
    // Degraded answers carry partial data by definition: pass them on, marked, without the strict schema check.
    if (degraded) return;
    const check = CapabilitySchemas.checkAnswer(capability, json);
    if (!check.valid) {
      const [first] = check.violations;
      fail(`${first.detail} (capability ${capability.name} schema)`, {
        field: first.field,
        schema_path: first.schemaPath,
        schema_errors: check.violations.slice(0, 20).map((v) => v.detail),
      });
    }
  }

  /**
   * A retryable runtime error whose retry the caller has to make: the runtime's
   * `retryAfter` (or the next backoff step) is longer than the request can wait,
   * or the work is queued. Synchronous callers get a clearly retryable problem
   * with `Retry-After`: 429 for the runtime's own rate limit, else 503.
   */
  private deferred(
    code: string,
    message: string,
    runtimeError: Record<string, unknown>,
    attempts: number,
    delayMs: number,
    retryAfterSeconds: number,
    queued: boolean,
  ): ExecutionFailure {
    const failure = new ExecutionFailure(
      code === 'RATE_LIMITED' ? 'rate_limit_exceeded' : 'service_unavailable',
      queued
        ? `The runtime answered ${code}: ${message}; retried in ${retryAfterSeconds} s`
        : `The runtime answered ${code}: ${message}; retry after ${retryAfterSeconds} s (longer than this request can wait)`,
      code,
      false,
      { runtime_error: runtimeError, attempts, retryable: true, retry_after: retryAfterSeconds },
      { 'Retry-After': String(retryAfterSeconds) },
    );
    failure.retryInMs = delayMs;
    return failure;
  }
}
