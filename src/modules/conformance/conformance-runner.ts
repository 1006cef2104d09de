import { Injectable } from '@nestjs/common';
import { OutboundHttp } from '../../common/http/outbound-http';
import { RuntimeTokens } from '../access/runtime-tokens';
import { CapabilityDescriptor } from '../descriptors/capability-descriptor';
import {
  ConformanceReport,
  DIMENSION_MAX,
  DimensionKey,
  DimensionReport,
  DIMENSIONS,
  finishReport,
  notRun,
  scoreDimension,
} from './conformance-report';
import { deferredLiveContracts, LiveChecks } from './live-checks';
import { RuntimeClient } from './runtime-client';
import { documentationChecks, schemaChecks, staticContractChecks } from './static-checks';
import { TestTraffic } from './test-traffic';

/** Free tier limits (spec: Limits): the strictest, so a package that passes here passes on every plan. */
export const RESPONSE_TIMEOUT_MS = 10_000;
export const MAX_RESPONSE_BYTES = 256 * 1024;

export interface ConformanceInput {
  /** The version's runtime; null when it declares none (every live call then fails, saying so). */
  runtimeUrl: string | null;
  riskTier: string;
  capabilities: CapabilityDescriptor[];
  /** All six dimensions against the live runtime; false: schema, contracts (static) and documentation only. */
  full: boolean;
  /** The app's webhook endpoint (its URL and signing secret): its signature checking is probed. Absent: not applicable. */
  webhook?: { url: string; secret: string };
  /** The app the version belongs to: the audience of the run's runtime tokens. Required for a full run. */
  appId?: string;
}

export type { ConformanceReport, DimensionKey };

/**
 * Scores a package version in six dimensions (docs/conformance.md lists every
 * check and its points). Pure: reads descriptors and calls the runtime, stores
 * nothing. Never throws for anything the runtime does: an unreachable runtime,
 * a bad certificate or a refused address fails checks with a detail saying so.
 */
@Injectable()
export class ConformanceRunner {
  constructor(
    private readonly http: OutboundHttp,
    private readonly tokens: RuntimeTokens,
  ) {}

  async run(input: ConformanceInput): Promise<ConformanceReport> {
    const { capabilities, full } = input;
    const dimensions = Object.fromEntries(DIMENSIONS.map((k) => [k, notRun(k)])) as Record<DimensionKey, DimensionReport>;
    dimensions.schema = scoreDimension(DIMENSION_MAX.schema, schemaChecks(capabilities));
    dimensions.documentation = scoreDimension(DIMENSION_MAX.documentation, documentationChecks(capabilities));
    const staticContracts = staticContractChecks(input.riskTier, capabilities);
    if (!full) {
      dimensions.contracts = scoreDimension(DIMENSION_MAX.contracts, [...staticContracts, ...deferredLiveContracts(capabilities)]);
      return finishReport(false, dimensions);
    }

    // A programming error, not the provider's: every caller of a full run knows the version's app.
    if (!input.appId) throw new Error('a full conformance run needs the app id: it is the audience of the runtime tokens');
    const runtimeUrl = (input.runtimeUrl ?? 'https://runtime.invalid').replace(/\/+$/, '');
    const client = new RuntimeClient({
      timeoutMs: RESPONSE_TIMEOUT_MS,
      maxBytes: MAX_RESPONSE_BYTES,
      http: this.http,
      blocked:
        input.runtimeUrl === null
          ? 'runtime_unavailable: not called, the version declares no runtimeUrl (set it on its capabilities or on the package)'
          : await this.refusal(runtimeUrl, 'runtimeUrl'),
    });
    const webhook = input.webhook ? { ...input.webhook, blocked: await this.refusal(input.webhook.url, 'webhook_url') } : undefined;
    const live = await new LiveChecks(
      client,
      {
        runtimeUrl,
        // Test traffic: runtime tokens like live ones (one per request, livemode false) for a synthetic install and user.
        traffic: new TestTraffic(this.tokens, input.appId),
        locale: 'en-US',
        timezone: 'UTC',
        webhook,
      },
      capabilities,
    ).run();

    dimensions.contracts = scoreDimension(DIMENSION_MAX.contracts, [...staticContracts, ...live.contracts]);
    dimensions.performance = scoreDimension(DIMENSION_MAX.performance, live.performance);
    dimensions.error_handling = scoreDimension(DIMENSION_MAX.error_handling, live.error_handling);
    dimensions.security = scoreDimension(DIMENSION_MAX.security, live.security);
    return finishReport(true, dimensions);
  }

  /**
   * The same rules as at registration (HTTPS, no credentials in the URL, no
   * private or loopback address unless ALLOW_PRIVATE_TARGETS), checked again
   * now because the rules may have changed since; every connection of the run
   * is checked once more by the outbound client, since DNS may change mid-run.
   * Returns why the URL is refused.
   */
  private async refusal(url: string, field: string): Promise<string | undefined> {
    try {
      await this.http.assertCallable(url, field);
      return undefined;
    } catch (error) {
      const detail = error instanceof Error ? ((error as { detail?: string }).detail ?? error.message) : String(error);
      return `runtime_unavailable: not called, ${detail}`;
    }
  }
}
