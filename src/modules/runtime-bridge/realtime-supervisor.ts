import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createParser, EventSourceMessage } from 'eventsource-parser';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { newId } from '../../common/ids';
import { OutboundHttp } from '../../common/http/outbound-http';
import { REDIS } from '../../infra/redis/redis.module';
import type { RedisClient } from '../../infra/redis/redis-client';
import { GatewayBus } from '../../infra/realtime/gateway-bus';
import { ExecutionTarget, InstallsService } from '../marketplace/installs.service';
import { CapabilityDescriptor } from '@soul-service/rules';
import { runtimeTimeoutMs } from './bridge-limits';
import { RealtimeSubscriptions, Subscription } from './realtime-subscriptions.service';
import { RuntimeInvoker } from './runtime-invoker.service';
import { StateCache } from './state-cache';
import { isObject } from '../../common/json';

/** Used when a realtime descriptor somehow lacks `heartbeatInterval` (the normaliser requires it). */
const DEFAULT_HEARTBEAT_SECONDS = 30;
const MAX_RECONNECT_DELAY_MS = 60_000;

/** Connection state published for observers (tests, operators) at `<prefix>:realtime:status:<install>:<capability>`. */
export interface StreamStatus {
  state: 'connecting' | 'open' | 'stale' | 'reconnecting' | 'closed';
  connects: number;
  staleCount: number;
  lastEventAt: string | null;
}

interface Stream {
  key: string;
  sub: Subscription;
  controller: AbortController | null;
  watchdog: NodeJS.Timeout | null;
  retry: NodeJS.Timeout | null;
  failures: number;
  status: StreamStatus;
  stopped: boolean;
}

/**
 * Worker-side supervisor of realtime streams: one `GET <runtimeUrl>/capabilities/<name>/stream`
 * per subscribed install and capability, held by one worker at a time (a Redis
 * lease), parsed with eventsource-parser. `data` events are relayed on the
 * Redis channel `<prefix>:capability:<install>:<capability>` for the gateway
 * and cached for surfaces; a stream silent for twice `heartbeatInterval` is
 * stale and is re-opened with backoff.
 */
@Injectable()
export class RealtimeSupervisor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RealtimeSupervisor.name);
  private readonly streams = new Map<string, Stream>();
  private readonly owner = randomUUID();
  private tick: NodeJS.Timeout | null = null;
  private reconciling = false;
  private shuttingDown = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly subscriptions: RealtimeSubscriptions,
    private readonly installs: InstallsService,
    private readonly invoker: RuntimeInvoker,
    private readonly cache: StateCache,
    private readonly http: OutboundHttp,
    private readonly bus: GatewayBus,
  ) {}

  onApplicationBootstrap(): void {
    this.tick = setInterval(() => void this.reconcile(), this.config.runtimeBridge.tickMs);
    this.tick.unref();
    void this.reconcile();
  }

  async onApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    if (this.tick) clearInterval(this.tick);
    for (const stream of this.streams.values()) await this.stop(stream);
  }

  /** Opens streams for new subscriptions, renews the leases of held ones, closes lapsed ones. */
  async reconcile(): Promise<void> {
    if (this.reconciling || this.shuttingDown) return;
    this.reconciling = true;
    try {
      const wanted = await this.subscriptions.active();
      const keys = new Set(wanted.map((s) => `${s.installId}:${s.capability}`));
      for (const stream of [...this.streams.values()]) if (!keys.has(stream.key)) await this.stop(stream);
      const leaseMs = this.config.runtimeBridge.tickMs * 3;
      for (const sub of wanted) {
        const key = `${sub.installId}:${sub.capability}`;
        const lock = `${this.config.redisPrefix}:realtime:lock:${key}`;
        if (this.streams.has(key)) {
          await this.redis.pexpire(lock, leaseMs);
          continue;
        }
        // Only one worker holds a given stream: the one that takes the lock.
        if ((await this.redis.set(lock, this.owner, 'PX', leaseMs, 'NX')) !== 'OK') continue;
        const stream: Stream = {
          key,
          sub,
          controller: null,
          watchdog: null,
          retry: null,
          failures: 0,
          status: { state: 'connecting', connects: 0, staleCount: 0, lastEventAt: null },
          stopped: false,
        };
        this.streams.set(key, stream);
        void this.open(stream);
      }
    } catch (error) {
      this.logger.warn(`realtime reconcile failed: ${(error as Error).message}`);
    } finally {
      this.reconciling = false;
    }
  }

  private async open(stream: Stream): Promise<void> {
    if (stream.stopped || this.shuttingDown) {
      this.streams.delete(stream.key);
      return;
    }
    const target = await this.installs.executionTarget({ installId: stream.sub.installId }).catch(() => undefined);
    const capability = target?.capabilities.find((c) => c.name === stream.sub.capability && c.type === 'realtime');
    if (!target || !capability || target.package_suspended || target.developer_suspended) {
      await this.stop(stream);
      return;
    }
    const heartbeatMs = (capability.heartbeatInterval ?? DEFAULT_HEARTBEAT_SECONDS) * 1000;
    const controller = new AbortController();
    stream.controller = controller;
    stream.status.state = 'connecting';
    let lastEventAt = Date.now();
    let stale = false;
    // The time limit covers the answer's headers only; the stream itself is long-lived and watched by the watchdog.
    const headerTimer = setTimeout(() => controller.abort(), runtimeTimeoutMs(target.app_tier, this.config.runtimeBridge.timeoutMs));
    try {
      // A runtime token for each (re)connect, minted for the request id of that connect.
      const auth = await this.invoker.liveHeaders(target, newId('req'));
      // Through the checked agent: the address is judged again at every (re)connect, not only at registration.
      const response = await this.http.fetch(`${target.runtime_url}/capabilities/${encodeURIComponent(capability.name)}/stream`, {
        headers: { accept: 'text/event-stream', ...auth },
        signal: controller.signal,
      });
      clearTimeout(headerTimer);
      if (response.status !== 200 || !(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        await response.body?.cancel().catch(() => undefined);
        throw new Error(`stream answered ${response.status} ${response.headers.get('content-type') ?? ''}`);
      }
      stream.status = { ...stream.status, state: 'open', connects: stream.status.connects + 1 };
      await this.publishStatus(stream);
      // Silence is measured from the last event of any kind: heartbeats prove liveness.
      stream.watchdog = setInterval(
        () => {
          if (Date.now() - lastEventAt > 2 * heartbeatMs) {
            stale = true;
            controller.abort();
          }
        },
        Math.max(50, heartbeatMs / 4),
      );
      const parser = createParser({
        onEvent: (event: EventSourceMessage) => {
          lastEventAt = Date.now();
          stream.failures = 0;
          stream.status.lastEventAt = new Date(lastEventAt).toISOString();
          if (event.event === 'data') void this.relay(target, capability, event.data);
        },
      });
      const decoder = new TextDecoder();
      // The body read has no overall timeout (streams are long-lived); only the watchdog ends a silent one.
      const reader = response.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        parser.feed(decoder.decode(chunk.value, { stream: true }));
      }
    } catch (error) {
      if (!stale && !stream.stopped) this.logger.warn(`realtime stream ${stream.key} failed: ${(error as Error).message}`);
    } finally {
      clearTimeout(headerTimer);
      if (stream.watchdog) clearInterval(stream.watchdog);
      stream.watchdog = null;
      controller.abort();
    }
    if (stream.stopped || this.shuttingDown) return;
    if (stale) {
      stream.status = { ...stream.status, state: 'stale', staleCount: stream.status.staleCount + 1 };
      await this.cache.markStale(stream.sub.installId, stream.sub.capability).catch(() => undefined);
      await this.bus
        .publish(this.subscriptions.channel(stream.sub.installId, stream.sub.capability), {
          type: 'stale',
          installId: stream.sub.installId,
          capability: stream.sub.capability,
          at: new Date().toISOString(),
        })
        .catch(() => undefined);
    } else {
      stream.status.state = 'reconnecting';
    }
    await this.publishStatus(stream);
    stream.failures += 1;
    const ceiling = Math.min(this.config.runtimeBridge.reconnectBaseMs * 2 ** (stream.failures - 1), MAX_RECONNECT_DELAY_MS);
    const delay = Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
    stream.retry = setTimeout(() => void this.open(stream), delay);
  }

  private async relay(target: ExecutionTarget, capability: CapabilityDescriptor, raw: string): Promise<void> {
    let data: unknown;
    try {
      data = JSON.parse(raw);
    } catch {
      return; // a data line that is not JSON breaks the contract; nothing to relay
    }
    if (!isObject(data)) return;
    const receivedAt = new Date().toISOString();
    await this.bus
      .publish(this.subscriptions.channel(target.install_id, capability.name), {
        type: 'data',
        installId: target.install_id,
        userId: target.user_id,
        capability: capability.name,
        data,
        receivedAt,
      })
      .catch(() => undefined);
    await this.cache
      .store(target.install_id, capability.name, {
        data,
        params: {},
        ttl: 0,
        fetchedAt: receivedAt,
        degraded: false,
        source: 'realtime',
      })
      .catch(() => undefined);
  }

  private async publishStatus(stream: Stream): Promise<void> {
    await this.redis
      .set(`${this.config.redisPrefix}:realtime:status:${stream.key}`, JSON.stringify(stream.status), 'EX', 3600)
      .catch(() => undefined);
  }

  private async stop(stream: Stream): Promise<void> {
    stream.stopped = true;
    stream.controller?.abort();
    if (stream.watchdog) clearInterval(stream.watchdog);
    if (stream.retry) clearTimeout(stream.retry);
    this.streams.delete(stream.key);
    stream.status.state = 'closed';
    await this.publishStatus(stream);
    const lock = `${this.config.redisPrefix}:realtime:lock:${stream.key}`;
    if ((await this.redis.get(lock).catch(() => null)) === this.owner) await this.redis.del(lock).catch(() => 0);
  }
}
