import { createHmac, randomBytes } from 'node:crypto';
import { randomId } from '../ids';
import { isObject } from '../json';
import { CapabilityDescriptor } from '../descriptors/capability-descriptor';
import { validatorFor } from '../descriptors/schema-checker';
import { CheckOutcome, checkOver, notApplicable } from './conformance-report';
import { findCredentials } from './credential-scan';
import { LIVE_CONTRACT_WEIGHTS } from './deferred-contracts';
import {
  envelopeProblems,
  errorEnvelopeProblem,
  Executable,
  executeProblem,
  ExecuteResult,
  historyLimit,
  isExecutable,
  Item,
  responseSchemaItem,
  streamEventProblems,
  transportProblem,
} from './runtime-answers';
import { describeExchange, Exchange, jsonBody } from './runtime-exchange';
import { alteredInput, invalidParamsFor, sampleFor } from './sample-values';
import { exampleRequest, withoutPagingParams } from './static-checks';
import { RuntimeClient } from './runtime-client';
import { REFUSED_TOKENS, TestTraffic } from './test-traffic';

export const PERFORMANCE_SAMPLES = 10;
const PERFORMANCE_CONCURRENCY = 5;
/** p95 at or under this earns full latency points; at or over `LATENCY_ZERO_MS`, none. */
export const LATENCY_FULL_MS = 1_000;
export const LATENCY_ZERO_MS = 5_000;
/** The longest the suite reads a realtime stream while waiting for a heartbeat. */
export const STREAM_WINDOW_CAP_MS = 10_000;
export const USER_AGENT = 'service-conformance/1';

export interface LiveTarget {
  runtimeUrl: string;
  /** The run's synthetic install and user, and the runtime tokens (livemode false) of its calls. */
  traffic: TestTraffic;
  locale: string;
  timezone: string;
  /** The app's webhook endpoint, probed with signed and unsigned deliveries; absent when the app has none. */
  webhook?: { url: string; secret: string; blocked?: string };
  /**
   * A run on the developer's machine (`soul conformance --url`), not by the service: what only the service's
   * own calls can judge (the runtime's certificate from a public CA at a public address) is not scored.
   */
  localRun?: boolean;
}

/** What a local run says about the checks it cannot judge (LiveTarget.localRun). */
export const NOT_JUDGED_LOCALLY =
  'not judged by a local run: the service calls your runtime at its public address over HTTPS and requires a certificate from a public CA';

export interface LiveOutcomes {
  contracts: CheckOutcome[];
  performance: CheckOutcome[];
  error_handling: CheckOutcome[];
  security: CheckOutcome[];
}

/**
 * The network half of a full run: contract calls for every capability, then
 * error-handling and security probes, then latency samples. Each phase's calls
 * run concurrently; phases run one after the other because later probes reuse
 * what earlier calls established (the idempotency key of an action).
 */
export class LiveChecks {
  constructor(
    private readonly client: RuntimeClient,
    private readonly target: LiveTarget,
    private readonly capabilities: CapabilityDescriptor[],
  ) {}

  async run(): Promise<LiveOutcomes> {
    const executables = this.capabilities.filter(isExecutable);
    const realtime = this.capabilities.filter((c) => c.type === 'realtime');

    const [executions, streams] = await Promise.all([
      Promise.all(executables.map((c) => this.execute(c, this.validRequest(c)))),
      Promise.all(realtime.map((c) => this.checkStream(c))),
    ]);
    const pagination = await Promise.all(executions.filter((e) => e.capability.type === 'history').map((e) => this.checkNextPage(e)));

    const [invalidParams, notFound, conflicts, signatures, tokenVerification] = await Promise.all([
      Promise.all(executions.map((e) => this.checkInvalidParams(e))),
      this.checkUnknownCapability(),
      Promise.all(executions.filter((e) => e.capability.type === 'action').map((e) => this.checkIdempotencyConflict(e))),
      this.checkWebhookSignatures(),
      this.checkTokenVerification(executions, realtime),
    ]);
    const latency = await this.sampleLatency(executions);

    return {
      contracts: [
        checkOver(
          'contracts.execute',
          LIVE_CONTRACT_WEIGHTS.execute,
          executions.map((e) => {
            const problem = executeProblem(e);
            return { ok: problem === null, why: `${e.capability.name} (${e.capability.type}): ${problem}` };
          }),
          'every execute call answered 200 application/json with the success envelope of its mode',
          'no state, action or history capability',
        ),
        checkOver(
          'contracts.response_schema',
          LIVE_CONTRACT_WEIGHTS.response_schema,
          executions.filter((e) => e.capability.responseSchema !== undefined).map((e) => responseSchemaItem(e)),
          'every data, result and history item matches the declared responseSchema',
          'no executable capability declares a responseSchema',
        ),
        checkOver(
          'contracts.history_pagination',
          LIVE_CONTRACT_WEIGHTS.history_pagination,
          pagination,
          'history cursors lead to a valid next page',
          'no history capability',
        ),
        checkOver(
          'contracts.realtime_stream',
          LIVE_CONTRACT_WEIGHTS.realtime_stream,
          streams,
          'every stream answers text/event-stream and sends a heartbeat within its interval',
          'no realtime capability',
        ),
      ],
      performance: [latency, this.withinTimeout(), this.responseSizes()],
      error_handling: [
        checkOver(
          'error_handling.invalid_params',
          5,
          invalidParams.filter((i): i is Item => i !== null),
          'invalid params are refused with 400 INVALID_PARAMS (retryable false)',
          'no capability has params that can be made invalid',
        ),
        checkOver('error_handling.not_found', 3, [notFound], 'an unknown capability answers 404 NOT_FOUND', 'never'),
        checkOver(
          'error_handling.idempotency_conflict',
          3,
          conflicts.filter((i): i is Item => i !== null),
          'a reused idempotency key with different input answers 409 CONFLICT',
          'no action capability with an input that can be varied',
        ),
        signatures,
      ],
      security: [this.tls(), this.noCredentials(), tokenVerification],
    };
  }

  // --- requests -------------------------------------------------------------

  private url(capability: string, suffix: 'execute' | 'stream'): string {
    return `${this.target.runtimeUrl}/capabilities/${encodeURIComponent(capability)}/${suffix}`;
  }

  /** Params or input for a capability: the first example that validates, else one made from the schema. */
  private validRequest(capability: Executable): Record<string, unknown> {
    const validate = validatorFor(capability.schema);
    for (const example of capability.examples ?? []) {
      const request = exampleRequest(capability, example);
      if (!request) continue;
      const own = capability.type === 'history' ? withoutPagingParams(capability, request) : request;
      if (validate(own).valid) return own;
    }
    const sample = sampleFor(capability.schema);
    return isObject(sample) ? sample : {};
  }

  private get userId(): string {
    return this.target.traffic.userId;
  }

  private get installId(): string {
    return this.target.traffic.installId;
  }

  /** The contract headers of a call; `auth` (a refused token's headers) replaces the run's valid token. */
  private async headers(
    capability: Executable,
    options: { idempotencyKey?: string; auth?: Record<string, string> } = {},
  ): Promise<Record<string, string>> {
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'User-Agent': USER_AGENT,
      ...(options.auth ?? (await this.target.traffic.headers())),
    };
    if (capability.type === 'state') headers['X-Service-User-Id'] = this.userId;
    if (capability.type === 'action') headers['X-Service-Idempotency-Key'] = options.idempotencyKey ?? randomId('idem');
    return headers;
  }

  private body(capability: Executable, request: Record<string, unknown>, cursor?: string): Record<string, unknown> {
    const { userId, installId } = this;
    const { locale, timezone } = this.target;
    if (capability.type === 'action') {
      return { capability: capability.name, mode: 'action', input: request, context: { userId, confirmationId: randomId('act') } };
    }
    const params =
      capability.type === 'history'
        ? { ...request, limit: historyLimit(capability), ...(cursor !== undefined ? { cursor } : {}), direction: 'backward' }
        : request;
    return { capability: capability.name, mode: capability.type, params, context: { userId, installId, locale, timezone } };
  }

  private async execute(
    capability: Executable,
    request: Record<string, unknown>,
    options: { idempotencyKey?: string; cursor?: string; auth?: Record<string, string>; label?: string } = {},
  ): Promise<ExecuteResult> {
    const idempotencyKey = capability.type === 'action' ? (options.idempotencyKey ?? randomId('idem')) : undefined;
    const exchange = await this.client.send(options.label ?? `${capability.name} execute`, this.url(capability.name, 'execute'), {
      method: 'POST',
      headers: await this.headers(capability, { idempotencyKey, auth: options.auth }),
      body: JSON.stringify(this.body(capability, request, options.cursor)),
    });
    const body = jsonBody(exchange.response);
    return { capability, exchange, transport: transportProblem(exchange, body), body, idempotencyKey, request };
  }

  // --- contracts ------------------------------------------------------------

  private async checkNextPage(first: ExecuteResult): Promise<Item> {
    const name = first.capability.name;
    if (first.transport !== null || !isObject(first.body) || !isObject(first.body.cursor)) {
      return { ok: false, why: `${name}: the first page was not a valid history answer` };
    }
    const { hasMore, next } = first.body.cursor;
    if (hasMore !== true) return { ok: true };
    if (typeof next !== 'string' || next === '') return { ok: false, why: `${name}: hasMore is true but cursor.next is empty` };
    const second = await this.execute(first.capability, first.request, { cursor: next, label: `${name} execute (next page)` });
    if (second.transport !== null) return { ok: false, why: `${name} next page: ${second.transport}` };
    const problems = envelopeProblems(first.capability, second.body);
    if (problems.length > 0) return { ok: false, why: `${name} next page: ${problems.join(', ')}` };
    const firstItems = JSON.stringify((first.body.items as unknown[])[0]);
    const secondItems = (second.body as { items: unknown[] }).items;
    if (secondItems.length > 0 && JSON.stringify(secondItems[0]) === firstItems) {
      return { ok: false, why: `${name}: the next page starts with the same item as the first (cursor ignored?)` };
    }
    return { ok: true };
  }

  private async checkStream(capability: CapabilityDescriptor): Promise<Item> {
    const interval = (capability.heartbeatInterval ?? 30) * 1000;
    const windowMs = Math.min(interval, STREAM_WINDOW_CAP_MS - 1_000) + 1_000;
    const { exchange, events } = await this.client.stream(
      `${capability.name} stream`,
      this.url(capability.name, 'stream'),
      { Accept: 'text/event-stream', 'User-Agent': USER_AGENT, ...(await this.target.traffic.headers()) },
      windowMs,
      (event) => event.event === 'heartbeat',
    );
    const name = capability.name;
    if (exchange.failure) return { ok: false, why: `${name}: ${exchange.failure.detail}` };
    const response = exchange.response!;
    if (response.status !== 200) return { ok: false, why: `${name}: stream ${describeExchange(exchange)}, expected 200` };
    if (!/^text\/event-stream/i.test(response.headers['content-type'] ?? '')) {
      return { ok: false, why: `${name}: Content-Type is ${response.headers['content-type'] ?? 'missing'}, expected text/event-stream` };
    }
    if (!/no-cache/i.test(response.headers['cache-control'] ?? '')) return { ok: false, why: `${name}: Cache-Control is not no-cache` };
    const problems = streamEventProblems(capability, events);
    if (!events.some((e) => e.event === 'heartbeat')) {
      problems.unshift(`no heartbeat event within ${windowMs / 1000} s (heartbeatInterval ${capability.heartbeatInterval} s)`);
    }
    return problems.length === 0 ? { ok: true } : { ok: false, why: `${name}: ${problems.join(', ')}` };
  }

  // --- error handling -------------------------------------------------------

  private async checkInvalidParams(valid: ExecuteResult): Promise<Item | null> {
    const capability = valid.capability;
    const invalid =
      capability.type === 'history'
        ? { params: { ...valid.request, __invalid__: true }, field: 'limit' }
        : invalidParamsFor(capability.schema, valid.request);
    if (!invalid) return null;
    let exchange: Exchange;
    if (capability.type === 'history') {
      // `limit` is an integer by the spec; a string there is invalid whatever the schema says.
      const body = { ...this.body(capability, invalid.params), params: { ...invalid.params, limit: 'ten', direction: 'backward' } };
      exchange = await this.client.send(`${capability.name} execute (invalid params)`, this.url(capability.name, 'execute'), {
        method: 'POST',
        headers: await this.headers(capability),
        body: JSON.stringify(body),
      });
    } else {
      exchange = (await this.execute(capability, invalid.params, { label: `${capability.name} execute (invalid params)` })).exchange;
    }
    const problem = errorEnvelopeProblem(exchange, 400, 'INVALID_PARAMS', false);
    return { ok: problem === null, why: `${capability.name} with a wrong "${invalid.field}": ${problem}` };
  }

  private async checkUnknownCapability(): Promise<Item> {
    const name = `conformance_unknown_${randomBytes(4).toString('hex')}`;
    const { userId, installId } = this;
    const { locale, timezone } = this.target;
    const exchange = await this.client.send('unknown capability execute', this.url(name, 'execute'), {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json',
        'User-Agent': USER_AGENT,
        ...(await this.target.traffic.headers()),
        'X-Service-User-Id': userId,
      },
      body: JSON.stringify({ capability: name, mode: 'state', params: {}, context: { userId, installId, locale, timezone } }),
    });
    const problem = errorEnvelopeProblem(exchange, 404, 'NOT_FOUND', false);
    return { ok: problem === null, why: `capability "${name}": ${problem}` };
  }

  private async checkIdempotencyConflict(first: ExecuteResult): Promise<Item | null> {
    const name = first.capability.name;
    const altered = alteredInput(first.capability.schema, first.request);
    if (!altered) return null;
    if (first.transport !== null)
      return { ok: false, why: `${name}: the first action call did not succeed, so a conflict cannot be provoked` };
    const again = await this.execute(first.capability, altered, {
      idempotencyKey: first.idempotencyKey,
      label: `${name} execute (same idempotency key, different input)`,
    });
    const problem = errorEnvelopeProblem(again.exchange, 409, 'CONFLICT', false);
    return { ok: problem === null, why: `${name}: ${problem}` };
  }

  /**
   * The app's webhook receiver must verify `X-Service-Signature` (HMAC-SHA256 of
   * the raw body with the webhook secret, `sha256=` prefix) and answer 401 to a
   * missing, unprefixed or wrong signature, and 2xx to a correct one.
   */
  private async checkWebhookSignatures(): Promise<CheckOutcome> {
    const id = 'error_handling.webhook_signature';
    const webhook = this.target.webhook;
    if (!webhook) return notApplicable(id, 4, 'the app has no webhook endpoint (no webhook_url with a signing secret)');
    if (webhook.blocked) return { id, weight: 4, fraction: 0, detail: webhook.blocked };
    const body = JSON.stringify({
      id: randomId('evt'),
      type: 'capability.invoked',
      created_at: new Date().toISOString(),
      app_id: randomId('app'),
      idempotency_key: randomId('idem'),
      data: {
        capability_name: 'conformance_probe',
        mode: 'state',
        user_id: this.userId,
        install_id: this.installId,
        request_id: randomId('req'),
        duration_ms: 1,
        status: 'ok',
      },
    });
    const digest = (key: string) => createHmac('sha256', key).update(body).digest('hex');
    const cases: Array<{ label: string; signature?: string; expect: 'rejected' | 'accepted' }> = [
      { label: 'without X-Service-Signature', expect: 'rejected' },
      { label: 'with a signature lacking the sha256= prefix', signature: digest(webhook.secret), expect: 'rejected' },
      { label: 'with a wrong signature', signature: `sha256=${digest(`${webhook.secret}-wrong`)}`, expect: 'rejected' },
      { label: 'correctly signed', signature: `sha256=${digest(webhook.secret)}`, expect: 'accepted' },
    ];
    const items = await Promise.all(
      cases.map(async ({ label, signature, expect }): Promise<Item> => {
        // Test traffic, marked as such like every call of the run.
        const headers: Record<string, string> = {
          'Content-Type': 'application/json',
          'User-Agent': USER_AGENT,
          'X-Service-Livemode': 'false',
        };
        if (signature !== undefined) headers['X-Service-Signature'] = signature;
        const exchange = await this.client.send(`webhook delivery ${label}`, webhook.url, { method: 'POST', headers, body });
        const status = exchange.response?.status;
        const ok = expect === 'rejected' ? status === 401 : status !== undefined && status >= 200 && status < 300;
        return { ok, why: `delivery ${label}: ${describeExchange(exchange)}, expected ${expect === 'rejected' ? '401' : '2xx'}` };
      }),
    );
    return checkOver(id, 4, items, `the receiver at ${webhook.url} verifies X-Service-Signature`, 'never');
  }

  // --- performance ----------------------------------------------------------

  private async sampleLatency(executions: ExecuteResult[]): Promise<CheckOutcome> {
    const id = 'performance.p95_latency';
    const pullers = executions.filter((e) => e.capability.type !== 'action');
    let durations: number[];
    let what: string;
    if (pullers.length > 0) {
      const queue = Array.from({ length: PERFORMANCE_SAMPLES }, (_, i) => pullers[i % pullers.length]);
      durations = [];
      const worker = async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          const sample = await this.execute(next.capability, next.request, { label: `${next.capability.name} execute (latency sample)` });
          durations.push(executeProblem(sample) === null ? sample.exchange.durationMs : this.client.timeoutMs);
        }
      };
      await Promise.all(Array.from({ length: PERFORMANCE_CONCURRENCY }, worker));
      what = `${PERFORMANCE_SAMPLES} state/history calls`;
    } else if (executions.length > 0) {
      durations = executions.map((e) => (executeProblem(e) === null ? e.exchange.durationMs : this.client.timeoutMs));
      what = `${executions.length} action calls`;
    } else {
      return notApplicable(id, 8, 'no state, action or history capability to time');
    }
    const sorted = [...durations].sort((a, b) => a - b);
    const p95 = sorted[Math.max(0, Math.ceil(0.95 * sorted.length) - 1)];
    const fraction =
      p95 <= LATENCY_FULL_MS ? 1 : p95 >= LATENCY_ZERO_MS ? 0 : (LATENCY_ZERO_MS - p95) / (LATENCY_ZERO_MS - LATENCY_FULL_MS);
    return {
      id,
      weight: 8,
      fraction,
      detail: `p95 ${Math.round(p95)} ms over ${what} (a call without a valid success answer counts as ${this.client.timeoutMs} ms; full points at or under ${LATENCY_FULL_MS} ms, none at ${LATENCY_ZERO_MS} ms or more)`,
    };
  }

  private withinTimeout(): CheckOutcome {
    const calls = this.client.exchanges.filter((e) => !e.stream && e.failure?.kind !== 'blocked');
    return checkOver(
      'performance.within_timeout',
      3,
      calls.map((e) => ({ ok: e.response !== undefined, why: `${e.label}: ${e.failure?.detail}` })),
      `every call was answered within the ${this.client.timeoutMs / 1000} s response timeout`,
      'no call was made',
    );
  }

  private responseSizes(): CheckOutcome {
    const answered = this.client.exchanges.filter((e) => !e.stream && e.response);
    const largest = Math.max(0, ...answered.map((e) => e.response!.bytes));
    return checkOver(
      'performance.response_size',
      4,
      answered.map((e) => ({
        ok: !e.response!.oversize,
        why: `${e.label}: response larger than 256 KB (${e.response!.bytes} bytes or more)`,
      })),
      `every response is within 256 KB (largest ${largest} bytes)`,
      'no response was received',
    );
  }

  // --- security -------------------------------------------------------------

  private tls(): CheckOutcome {
    const id = 'security.tls';
    if (this.target.localRun) return notApplicable(id, 2, NOT_JUDGED_LOCALLY);
    const own = this.client.exchanges.filter((e) => e.url.startsWith(this.target.runtimeUrl));
    const blocked = own.find((e) => e.failure?.kind === 'blocked');
    if (blocked) return { id, weight: 2, fraction: 0, detail: blocked.failure!.detail };
    const tlsFailure = own.find((e) => e.failure?.kind === 'tls');
    if (tlsFailure) return { id, weight: 2, fraction: 0, detail: tlsFailure.failure!.detail };
    if (own.some((e) => e.response)) {
      return { id, weight: 2, fraction: 1, detail: 'HTTPS with a certificate that verifies against the trusted CAs' };
    }
    const first = own.find((e) => e.failure);
    return { id, weight: 2, fraction: 0, detail: `no TLS connection could be made: ${first?.failure?.detail ?? 'no call was made'}` };
  }

  /** All or nothing: one leaked credential anywhere is a leak (spec: credentials in responses block submission). */
  private noCredentials(): CheckOutcome {
    const id = 'security.no_credentials';
    const answered = this.client.exchanges.filter((e) => e.response);
    if (answered.length === 0) return notApplicable(id, 6, 'no response was received to inspect');
    const known = this.target.traffic.sent.map((value) => ({ name: 'a bearer token the service sent', value }));
    if (this.target.webhook) known.push({ name: 'the webhook secret', value: this.target.webhook.secret });
    const leaks = new Map<string, Set<string>>();
    for (const e of answered) {
      const headerText = Object.entries(e.response!.headers)
        .map(([k, v]) => `${k}: ${v}`)
        .join('\n');
      const found = findCredentials(`${headerText}\n${e.response!.text}`, known);
      const where = e.label.replace(/ \(latency sample\)$/, '');
      if (found.length > 0) leaks.set(where, new Set([...(leaks.get(where) ?? []), ...found]));
    }
    if (leaks.size === 0)
      return { id, weight: 6, fraction: 1, detail: `no credentials found in ${answered.length} responses`, blocking: true };
    const detail = [...leaks].map(([where, found]) => `${where}: response contains ${[...found].join(', ')}`).join('; ');
    return { id, weight: 6, fraction: 0, detail, blocking: true };
  }

  /**
   * The runtime must verify the token of every call (docs/runtime-auth.md):
   * a call without one, with an expired one, with one signed by another key
   * and with one minted for another app are each refused with 401. A
   * state or history capability is probed when there is one (a refused call
   * must not act; an action is probed only when there is nothing else), else
   * the first realtime stream. Blocking: a runtime that lets any of them through
   * cannot reach the security floor.
   */
  private async checkTokenVerification(executions: ExecuteResult[], realtime: CapabilityDescriptor[]): Promise<CheckOutcome> {
    const id = 'security.token_verification';
    const probe = executions.find((e) => e.capability.type !== 'action') ?? executions[0];
    if (!probe && !realtime[0]) return notApplicable(id, 2, 'the package has no runtime endpoint to call');
    const items = await Promise.all(
      REFUSED_TOKENS.map(async ({ kind, label }): Promise<Item> => {
        const auth = await this.target.traffic.refusedHeaders(kind);
        let exchange: Exchange;
        if (probe) {
          const name = probe.capability.name;
          exchange = (await this.execute(probe.capability, probe.request, { auth, label: `${name} execute (${label})` })).exchange;
        } else {
          exchange = (
            await this.client.stream(
              `${realtime[0].name} stream (${label})`,
              this.url(realtime[0].name, 'stream'),
              { Accept: 'text/event-stream', 'User-Agent': USER_AGENT, ...auth },
              3_000,
              () => true,
            )
          ).exchange;
        }
        const ok = exchange.response?.status === 401;
        return { ok, why: `${exchange.label}: ${describeExchange(exchange)}, expected 401` };
      }),
    );
    const outcome = checkOver(
      id,
      2,
      items,
      'calls without a token, with an expired token, a token signed by another key and a token for another app are refused with 401',
      'never',
    );
    return { ...outcome, blocking: true };
  }
}
