import { CapabilityDescriptor } from '../descriptors/capability-descriptor';
import { RULES_VERSION } from '../rules-version';
import { DIMENSION_MAX, finishReport, scoreDimension } from './conformance-report';
import { LiveChecks } from './live-checks';
import { HttpPort, RuntimeTokenPort } from './ports';
import { RuntimeClient } from './runtime-client';
import { staticContractChecks } from './static-checks';
import { staticVerdict, Verdict } from './static-verdict';
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
  /** A run by the CLI on the developer's machine (LiveTarget.localRun); the service never sets it. */
  localRun?: boolean;
}

/** What a run calls the runtime with: the host's HTTP client and runtime token issuer. */
export interface ConformancePorts {
  http: HttpPort;
  tokens: RuntimeTokenPort;
}

/**
 * Scores a package version in six dimensions (docs/conformance.md lists every
 * check and its points). Reads descriptors and calls the runtime through the
 * ports, stores nothing. Never throws for anything the runtime does: an
 * unreachable runtime, a bad certificate or a refused address fails checks
 * with a detail saying so. A quick run (`full: false`) is `staticVerdict`.
 */
export async function runConformance(input: ConformanceInput, ports: ConformancePorts): Promise<Verdict> {
  const { capabilities, full } = input;
  const quick = staticVerdict(input);
  if (!full) return quick;
  const { dimensions } = quick;

  // A programming error, not the provider's: every caller of a full run knows the version's app.
  if (!input.appId) throw new Error('a full conformance run needs the app id: it is the audience of the runtime tokens');
  const runtimeUrl = (input.runtimeUrl ?? 'https://runtime.invalid').replace(/\/+$/, '');
  const client = new RuntimeClient({
    timeoutMs: RESPONSE_TIMEOUT_MS,
    maxBytes: MAX_RESPONSE_BYTES,
    http: ports.http,
    blocked:
      input.runtimeUrl === null
        ? 'runtime_unavailable: not called, the version declares no runtimeUrl (set it on its capabilities or on the package)'
        : await refusal(ports.http, runtimeUrl, 'runtimeUrl'),
  });
  const webhook = input.webhook ? { ...input.webhook, blocked: await refusal(ports.http, input.webhook.url, 'webhook_url') } : undefined;
  const live = await new LiveChecks(
    client,
    {
      runtimeUrl,
      // Test traffic: runtime tokens like live ones (one per request, livemode false) for a synthetic install and user.
      traffic: new TestTraffic(ports.tokens, input.appId),
      locale: 'en-US',
      timezone: 'UTC',
      webhook,
      localRun: input.localRun,
    },
    capabilities,
  ).run();

  dimensions.contracts = scoreDimension(DIMENSION_MAX.contracts, [
    ...staticContractChecks(input.riskTier, capabilities),
    ...live.contracts,
  ]);
  dimensions.performance = scoreDimension(DIMENSION_MAX.performance, live.performance);
  dimensions.error_handling = scoreDimension(DIMENSION_MAX.error_handling, live.error_handling);
  dimensions.security = scoreDimension(DIMENSION_MAX.security, live.security);
  return { ...finishReport(true, dimensions), rulesVersion: RULES_VERSION };
}

/**
 * The host's registration rules (the service: HTTPS, no credentials in the
 * URL, no private or loopback address unless ALLOW_PRIVATE_TARGETS), checked
 * again now because the rules may have changed since; every connection of the
 * run is checked once more by the HTTP port, since DNS may change mid-run.
 * Returns why the URL is refused.
 */
async function refusal(http: HttpPort, url: string, field: string): Promise<string | undefined> {
  try {
    await http.assertCallable(url, field);
    return undefined;
  } catch (error) {
    const detail = error instanceof Error ? ((error as { detail?: string }).detail ?? error.message) : String(error);
    return `runtime_unavailable: not called, ${detail}`;
  }
}
