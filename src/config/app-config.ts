import { isIP } from 'node:net';

export type AppRole = 'api' | 'worker' | 'all';

/** Typed, validated view of the environment. Built once at start-up by `loadConfig`. */
export interface AppConfig {
  role: AppRole;
  nodeEnv: string;
  port: number;
  host: string;
  publicBaseUrl: string;
  docsUrl: string;
  databaseUrl: string;
  redisUrl: string;
  /**
   * Seed nodes of a Redis Cluster (`REDIS_CLUSTER_NODES`); empty: one Redis at `redisUrl`. When set,
   * `redisUrl` only lends its user, password and TLS to every node (docs/operations.md, "Redis Cluster").
   */
  redisClusterNodes: Array<{ host: string; port: number }>;
  /** Prefix of every Redis key the service writes (queues, limits, caches), so several deployments or test runs can share one server. */
  redisPrefix: string;
  idp: { projectId: string | undefined; jwksUrl: string; issuer: string; audience: string; jwksCooldownMs: number };
  /**
   * The development identity provider served by the service itself (`DEV_IDP`; on by default in development
   * when no provider is configured, refused in production): `idp` then points at it (docs/decisions.md, issue 23).
   */
  devIdp: boolean;
  /** Firebase Authentication web sign-in for /app (`FIREBASE_API_KEY`, `FIREBASE_AUTH_DOMAIN`); unset: no Firebase sign-in page. */
  firebaseWeb: { apiKey: string; authDomain: string; projectId: string } | undefined;
  /** Lifetime of provider platform access tokens (developer console and app tokens); 3600 by the spec. */
  platformTokenTtlSeconds: number;
  /** Published packages with no activity (versions, installs, executions) for this many days are suspended. */
  packageInactivityDays: number;
  /** Unauthenticated calls (logins, account creation) per client address per minute. */
  anonymousPerMinute: number;
  /** Provider platform limits per app: the standard sustained tier and the burst window. */
  platformLimits: { perMinute: number; burstPerSecond: number };
  /** Request limits of the enterprise tier (free and pro are fixed by the spec). */
  enterpriseLimits: { perMinute: number; perDay: number };
  /** OpenAI-compatible chat completions endpoint for agent actions; unset: the built-in composer. */
  agentLlm: { url: string | undefined; model: string; apiKey: string | undefined };
  tokenSigningKey: string | undefined;
  encryptionKey: Buffer | undefined;
  smtpUrl: string | undefined;
  operatorToken: string | undefined;
  /** Bearer that may read `GET /metrics` on the api port (the operator token may too); unset and no operator token: closed. */
  metricsToken: string | undefined;
  allowPrivateTargets: boolean;
  webhookDeliveryIps: { ipv4: string[]; ipv6: string[] };
  /** Outbound webhook delivery tuning (docs/webhooks.md). */
  webhooks: {
    /** First retry delay; later ones are 60, 360, 1440 and 3600 times it (5 s gives Svix's 5 s, 5 min, 30 min, 2 h, 5 h). */
    retryBaseMs: number;
    /** Deliveries in flight at once to one endpoint. */
    endpointConcurrency: number;
    /** An endpoint failing every delivery for this long is disabled (default 5 days). */
    disableAfterSeconds: number;
    /** How long a rotated-out signing secret still signs (default 24 hours). */
    secretGraceSeconds: number;
    /** How often the worker looks for signing secrets due for rotation (and mails a reminder). */
    sweepIntervalMs: number;
  };
  logLevel: string;
  /** Port of the worker role's small health listener (worker only; 0 disables it). */
  workerHealthPort: number;
  /** Safety-net sweep of the outbox dispatcher; NOTIFY on commit and retry timers do the real work. */
  eventSweepIntervalMs: number;
  /** The event backbone (docs/decisions.md, "Event backbone"; docs/operations.md). */
  backbone: {
    /** Concurrent drains of the domain event outbox per worker process. */
    eventDrains: number;
    /** Events one drain claims and hands to the subscribers in one transaction. */
    eventBatchSize: number;
    /** Concurrent relays of the job outbox per worker process. */
    relays: number;
    /** Job rows one relay moves to BullMQ in one `addBulk`. */
    relayBatchSize: number;
    /** The relay's safety sweep: unrelayed rows whose wake-up was missed, relayed rows whose job was lost. */
    relaySweepMs: number;
    /** A relayed row is checked against BullMQ once it has gone this long without finishing (or since its last check). */
    relayCheckAfterMs: number;
    /** A job that failed for good is run again after this long, doubling per failure (it may have failed on an outage). */
    relayRetryFailedMs: number;
  };
  /**
   * Runtime bridge timings. The spec fixes the Free tier (10 s timeout, retries from 1 s);
   * they are configurable so tests and slow deployments can shorten or stretch them.
   */
  runtimeBridge: {
    /** Response timeout of one runtime call (`RUNTIME_TIMEOUT_MS`, default 10 s: the Free tier). */
    timeoutMs: number;
    /** Base delay of the retry backoff (`RUNTIME_RETRY_BASE_MS`, default 1 s). */
    retryBaseMs: number;
    /** Longest a caller waits for retries inside one request (`RUNTIME_RETRY_BUDGET_MS`); beyond it the error is returned with `Retry-After`. */
    retryBudgetMs: number;
    /** How often the worker looks for due state polls and realtime subscriptions (`RUNTIME_TICK_MS`). */
    tickMs: number;
    /** Base delay before re-opening a dropped or stale realtime stream (`REALTIME_RECONNECT_BASE_MS`). */
    reconnectBaseMs: number;
  };
  /** WebSocket gateway: heartbeat interval, notice before token expiry, and per-connection frame budget. */
  gateway: { heartbeatMs: number; expiryNoticeSeconds: number; framesPerSecond: number; frameBurst: number };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
/** Audience of the development identity provider's ID tokens. */
export const DEV_IDP_AUDIENCE = 'dev-project';
const FIREBASE_JWKS = 'https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com';

type Env = Record<string, string | undefined>;

/**
 * Reads and validates every variable of the configuration table. All problems are
 * collected and reported together, each naming its variable, so an operator fixes
 * a broken deployment in one pass.
 */
export function loadConfig(env: Env = process.env): AppConfig {
  const problems: string[] = [];
  const read = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const fail = (name: string, why: string) => problems.push(`${name} ${why}`);

  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const value = read(name) ?? fallback;
    if (!allowed.includes(value as T)) fail(name, `must be one of ${allowed.join(', ')} (got "${value}")`);
    return value as T;
  };
  const port = (name: string, fallback: number, allowZero = false): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n > 65535 || (!allowZero && n === 0)) {
      fail(name, `must be a TCP port number (got "${raw}")`);
      return fallback;
    }
    return n;
  };
  const url = (name: string, fallback: string | undefined, protocols: string[]): string | undefined => {
    const raw = read(name) ?? fallback;
    if (raw === undefined) return undefined;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) {
        fail(name, `must use ${protocols.map((p) => p.replace(':', '')).join(' or ')} (got "${parsed.protocol.replace(':', '')}")`);
      }
      return raw.replace(/\/+$/, '');
    } catch {
      fail(name, `must be an absolute URL (got "${raw}")`);
      return raw;
    }
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max) {
      fail(name, `must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return n;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = read(name);
    if (raw === undefined) return fallback;
    if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
    if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
    fail(name, `must be true or false (got "${raw}")`);
    return fallback;
  };

  const nodeEnv = read('NODE_ENV') ?? 'development';
  const role = oneOf('APP_ROLE', ['api', 'worker', 'all'] as const, 'all');
  const host = read('HOST') ?? '0.0.0.0';
  if (isIP(host) === 0 && !/^[a-zA-Z0-9.-]+$/.test(host)) fail('HOST', `must be an IP address or host name (got "${host}")`);

  const projectId = read('IDP_PROJECT_ID');
  const idpDefaultsNeeded = !projectId && (!read('IDP_ISSUER') || !read('IDP_AUDIENCE'));
  if (idpDefaultsNeeded && nodeEnv === 'production') {
    fail('IDP_PROJECT_ID', 'is required in production unless IDP_ISSUER and IDP_AUDIENCE are both set');
  }
  const idpProject = projectId ?? 'local-dev';
  // `auto` (what `npm start` passes): on in development when no provider is configured, so a fresh checkout can sign in.
  const devIdpRaw = read('DEV_IDP');
  const noProviderConfigured = !projectId && !read('IDP_JWKS_URL') && !read('IDP_ISSUER');
  const devIdp = devIdpRaw?.toLowerCase() === 'auto' ? nodeEnv === 'development' && noProviderConfigured : bool('DEV_IDP', false);
  if (devIdp && nodeEnv === 'production') fail('DEV_IDP', 'must not be enabled when NODE_ENV=production (it signs anyone in)');
  if (devIdp && (projectId || read('IDP_JWKS_URL'))) fail('DEV_IDP', 'cannot be combined with IDP_PROJECT_ID or IDP_JWKS_URL');
  const firebaseApiKey = read('FIREBASE_API_KEY');
  if (firebaseApiKey && !projectId) fail('FIREBASE_API_KEY', 'needs IDP_PROJECT_ID (the Firebase project the web sign-in belongs to)');

  const encryptionKeyRaw = read('ENCRYPTION_KEY');
  let encryptionKey: Buffer | undefined;
  if (encryptionKeyRaw !== undefined) {
    encryptionKey = Buffer.from(encryptionKeyRaw, 'base64');
    if (encryptionKey.length !== 32) fail('ENCRYPTION_KEY', `must be 32 bytes encoded in base64 (got ${encryptionKey.length} bytes)`);
  } else if (nodeEnv === 'production') {
    fail('ENCRYPTION_KEY', 'is required when NODE_ENV=production');
  }

  const operatorToken = read('OPERATOR_TOKEN');
  if (operatorToken !== undefined && operatorToken.length < 16) fail('OPERATOR_TOKEN', 'must be at least 16 characters');
  const metricsToken = read('METRICS_TOKEN');
  if (metricsToken !== undefined && metricsToken.length < 16) fail('METRICS_TOKEN', 'must be at least 16 characters');

  const tokenSigningKey = read('TOKEN_SIGNING_KEY');
  if (tokenSigningKey !== undefined && !tokenSigningKey.includes('PRIVATE KEY') && !tokenSigningKey.startsWith('{')) {
    fail('TOKEN_SIGNING_KEY', 'must be a PKCS#8 PEM or a JWK (JSON) holding an EC P-256 private key');
  }

  const webhookDeliveryIps = { ipv4: [] as string[], ipv6: [] as string[] };
  for (const cidr of (read('WEBHOOK_DELIVERY_IPS') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [address, bits] = cidr.split('/');
    const family = isIP(address);
    const max = family === 4 ? 32 : 128;
    if (family === 0 || bits === undefined || !/^\d+$/.test(bits) || Number(bits) > max) {
      fail('WEBHOOK_DELIVERY_IPS', `must be a comma-separated list of CIDR ranges (bad entry "${cidr}")`);
      continue;
    }
    (family === 4 ? webhookDeliveryIps.ipv4 : webhookDeliveryIps.ipv6).push(cidr);
  }

  const redisPrefix = read('REDIS_PREFIX') ?? 'svc';
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(redisPrefix)) fail('REDIS_PREFIX', 'must be 1-64 letters, digits, dots, dashes or underscores');

  const redisClusterNodes: Array<{ host: string; port: number }> = [];
  for (const entry of (read('REDIS_CLUSTER_NODES') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    // host:port, or [ipv6]:port
    const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(entry);
    const nodeHost = match?.[1] ?? match?.[2];
    const nodePort = Number(match?.[3]);
    if (!match || (match[1] !== undefined && isIP(nodeHost!) !== 6) || nodePort < 1 || nodePort > 65535) {
      fail('REDIS_CLUSTER_NODES', `must be a comma-separated list of host:port seed nodes (bad entry "${entry}")`);
      continue;
    }
    redisClusterNodes.push({ host: nodeHost!, port: nodePort });
  }

  const publicBaseUrl = url('PUBLIC_BASE_URL', 'http://localhost:3000', ['http:', 'https:'])!;
  const config: AppConfig = {
    role,
    nodeEnv,
    port: port('PORT', 3000, true),
    host,
    publicBaseUrl,
    docsUrl: url('DOCS_URL', 'https://docs.example.com', ['http:', 'https:'])!,
    databaseUrl: url('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/service', ['postgres:', 'postgresql:'])!,
    redisUrl: url('REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:'])!,
    redisClusterNodes,
    redisPrefix,
    idp: devIdp
      ? {
          projectId: undefined,
          jwksUrl: `${publicBaseUrl}/dev-idp/jwks.json`,
          issuer: `${publicBaseUrl}/dev-idp`,
          audience: DEV_IDP_AUDIENCE,
          jwksCooldownMs: 0,
        }
      : {
          projectId,
          jwksUrl: url('IDP_JWKS_URL', FIREBASE_JWKS, ['http:', 'https:'])!,
          issuer: read('IDP_ISSUER') ?? `https://securetoken.google.com/${idpProject}`,
          audience: read('IDP_AUDIENCE') ?? idpProject,
          jwksCooldownMs: int('IDP_JWKS_COOLDOWN_SECONDS', 30, 0, 3600) * 1000,
        },
    devIdp,
    firebaseWeb:
      firebaseApiKey && projectId
        ? { apiKey: firebaseApiKey, authDomain: read('FIREBASE_AUTH_DOMAIN') ?? `${projectId}.firebaseapp.com`, projectId }
        : undefined,
    platformTokenTtlSeconds: int('PLATFORM_TOKEN_TTL_SECONDS', 3600, 1, 86_400),
    packageInactivityDays: int('PACKAGE_INACTIVITY_DAYS', 180, 1, 3650),
    anonymousPerMinute: int('ANONYMOUS_RATE_LIMIT_PER_MINUTE', 60, 1, 1_000_000),
    platformLimits: {
      perMinute: int('PLATFORM_RATE_LIMIT_PER_MINUTE', 600, 1, 10_000_000),
      burstPerSecond: int('PLATFORM_BURST_PER_SECOND', 10, 1, 100_000),
    },
    enterpriseLimits: {
      perMinute: int('RATE_LIMIT_ENTERPRISE_PER_MINUTE', 3000, 1, 10_000_000),
      perDay: int('RATE_LIMIT_ENTERPRISE_PER_DAY', 1_000_000, 1, 1_000_000_000),
    },
    agentLlm: {
      url: url('AGENT_LLM_URL', undefined, ['http:', 'https:']),
      model: read('AGENT_LLM_MODEL') ?? 'gpt-4o-mini',
      apiKey: read('AGENT_LLM_API_KEY'),
    },
    tokenSigningKey,
    encryptionKey,
    smtpUrl: url('SMTP_URL', undefined, ['smtp:', 'smtps:']),
    operatorToken,
    metricsToken,
    allowPrivateTargets: bool('ALLOW_PRIVATE_TARGETS', false),
    webhookDeliveryIps,
    webhooks: {
      retryBaseMs: int('WEBHOOK_RETRY_BASE_MS', 5_000, 1, 3_600_000),
      endpointConcurrency: int('WEBHOOK_ENDPOINT_CONCURRENCY', 4, 1, 1_000),
      disableAfterSeconds: int('WEBHOOK_DISABLE_AFTER_SECONDS', 5 * 86_400, 0, 365 * 86_400),
      secretGraceSeconds: int('WEBHOOK_SECRET_GRACE_SECONDS', 86_400, 0, 30 * 86_400),
      sweepIntervalMs: int('WEBHOOK_SWEEP_INTERVAL_MS', 60_000, 100, 3_600_000),
    },
    logLevel: oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    workerHealthPort: port('WORKER_HEALTH_PORT', 3001, true),
    eventSweepIntervalMs: int('EVENT_SWEEP_INTERVAL_MS', 5_000, 100, 3_600_000),
    backbone: {
      eventDrains: int('EVENT_DRAINS', 4, 1, 64),
      eventBatchSize: int('EVENT_BATCH_SIZE', 500, 1, 10_000),
      relays: int('JOB_RELAYS', 2, 1, 64),
      relayBatchSize: int('JOB_RELAY_BATCH_SIZE', 1_000, 1, 10_000),
      relaySweepMs: int('JOB_RELAY_SWEEP_MS', 15_000, 100, 3_600_000),
      relayCheckAfterMs: int('JOB_RELAY_CHECK_AFTER_MS', 60_000, 100, 86_400_000),
      relayRetryFailedMs: int('JOB_RELAY_RETRY_FAILED_MS', 60_000, 100, 86_400_000),
    },
    runtimeBridge: {
      timeoutMs: int('RUNTIME_TIMEOUT_MS', 10_000, 100, 300_000),
      retryBaseMs: int('RUNTIME_RETRY_BASE_MS', 1_000, 1, 300_000),
      retryBudgetMs: int('RUNTIME_RETRY_BUDGET_MS', 30_000, 0, 600_000),
      tickMs: int('RUNTIME_TICK_MS', 5_000, 100, 3_600_000),
      reconnectBaseMs: int('REALTIME_RECONNECT_BASE_MS', 1_000, 10, 300_000),
    },
    gateway: {
      heartbeatMs: int('GATEWAY_HEARTBEAT_MS', 25_000, 100, 300_000),
      expiryNoticeSeconds: int('GATEWAY_EXPIRY_NOTICE_SECONDS', 60, 1, 3600),
      framesPerSecond: int('GATEWAY_FRAMES_PER_SECOND', 20, 1, 10_000),
      frameBurst: int('GATEWAY_FRAME_BURST', 40, 1, 100_000),
    },
  };

  if (config.databaseUrl) {
    try {
      const name = new URL(config.databaseUrl).pathname.replace(/^\//, '');
      if (!/^[A-Za-z0-9_-]{1,63}$/.test(name)) fail('DATABASE_URL', `must name a database of letters, digits, _ or - (got "${name}")`);
    } catch {
      /* reported above */
    }
  }

  if (redisClusterNodes.length > 0 && config.redisUrl) {
    try {
      const db = new URL(config.redisUrl).pathname.replace(/^\//, '');
      // A cluster has database 0 only; refusing another keeps a single-server URL from being half applied.
      if (db !== '' && db !== '0')
        fail('REDIS_URL', `must not name a database (got "/${db}") when REDIS_CLUSTER_NODES is set: a cluster has database 0 only`);
    } catch {
      /* reported above */
    }
  }

  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
