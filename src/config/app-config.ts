import { customCleanEnv } from 'envalid';
import { ENV_SCHEMA, FIREBASE_JWKS, SeedNode } from './env-schema';

export type AppRole = 'api' | 'worker' | 'all';

/** Typed, validated view of the environment. Built once at start-up by `loadConfig` from the schema in env-schema.ts. */
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
  redisClusterNodes: SeedNode[];
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
    /** How often a `soul dev` stream pings, renews its session and checks its credential again (`DEV_SESSION_RENEW_MS`, default 15 s). */
    devSessionRenewMs: number;
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

/** Audience of the development identity provider's ID tokens. */
export const DEV_IDP_AUDIENCE = 'dev-project';

type Env = Record<string, string | undefined>;
type Cleaned = { readonly [K in keyof typeof ENV_SCHEMA]: ReturnType<(typeof ENV_SCHEMA)[K]['_parse']> | undefined };

/**
 * Rules that span several variables, checked after each variable passed its own parser. Each returns the
 * variable to blame and why, or nothing; a rule is skipped when the variable it blames already failed.
 */
const CROSS_RULES: Array<(env: Cleaned, raw: Env) => [string, string] | undefined> = [
  (env) =>
    env.NODE_ENV === 'production' && !env.IDP_PROJECT_ID && (!env.IDP_ISSUER || !env.IDP_AUDIENCE)
      ? ['IDP_PROJECT_ID', 'is required in production unless IDP_ISSUER and IDP_AUDIENCE are both set']
      : undefined,
  (env, raw) =>
    devIdpOn(env, raw) && env.NODE_ENV === 'production'
      ? ['DEV_IDP', 'must not be enabled when NODE_ENV=production (it signs anyone in)']
      : undefined,
  (env, raw) =>
    devIdpOn(env, raw) && (raw.IDP_PROJECT_ID || raw.IDP_JWKS_URL)
      ? ['DEV_IDP', 'cannot be combined with IDP_PROJECT_ID or IDP_JWKS_URL']
      : undefined,
  (env) =>
    env.FIREBASE_API_KEY && !env.IDP_PROJECT_ID
      ? ['FIREBASE_API_KEY', 'needs IDP_PROJECT_ID (the Firebase project the web sign-in belongs to)']
      : undefined,
  (env, raw) =>
    raw.ENCRYPTION_KEY === undefined && env.NODE_ENV === 'production'
      ? ['ENCRYPTION_KEY', 'is required when NODE_ENV=production']
      : undefined,
  (env) => {
    if (!env.REDIS_CLUSTER_NODES?.length || !env.REDIS_URL) return undefined;
    const db = new URL(env.REDIS_URL).pathname.replace(/^\//, '');
    // A cluster has database 0 only; refusing another keeps a single-server URL from being half applied.
    return db !== '' && db !== '0'
      ? ['REDIS_URL', `must not name a database (got "/${db}") when REDIS_CLUSTER_NODES is set: a cluster has database 0 only`]
      : undefined;
  },
];

/** `DEV_IDP=auto` (what `npm start` passes): on in development when no identity provider is configured. */
function devIdpOn(env: Cleaned, raw: Env): boolean {
  if (env.DEV_IDP !== 'auto') return env.DEV_IDP === true;
  return env.NODE_ENV === 'development' && !raw.IDP_PROJECT_ID && !raw.IDP_JWKS_URL && !raw.IDP_ISSUER;
}

/**
 * Reads and validates every variable of the schema (env-schema.ts). All problems are collected and reported
 * together, each naming its variable, so an operator fixes a broken deployment in one pass; the entry points
 * print them and exit with 78 (EX_CONFIG).
 */
export function loadConfig(env: Env = process.env): AppConfig {
  // A blank value counts as unset (a compose file's `VAR=` line), and values are trimmed.
  const raw: Env = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && value.trim() !== '') raw[name] = value.trim();

  const problems: string[] = [];
  const failed = new Set<string>();
  // A failed variable is missing from the cleaned values (hence Cleaned's `| undefined`) and reported instead.
  const e = customCleanEnv<typeof ENV_SCHEMA, Cleaned>(raw, ENV_SCHEMA, (cleaned) => cleaned, {
    reporter: ({ errors }) => {
      for (const [name, error] of Object.entries<Error | undefined>(errors)) {
        if (!error) continue;
        failed.add(name);
        problems.push(`${name} ${error.message}`);
      }
    },
  });
  for (const rule of CROSS_RULES) {
    const problem = rule(e, raw);
    if (problem && !failed.has(problem[0])) problems.push(`${problem[0]} ${problem[1]}`);
  }
  if (problems.length > 0) throw new ConfigError(problems);

  // Every variable passed: the values below are the parsed ones or their defaults.
  const v = e as { readonly [K in keyof Cleaned]-?: NonNullable<Cleaned[K]> };
  const devIdp = devIdpOn(e, raw);
  const idpProject = e.IDP_PROJECT_ID ?? 'local-dev';
  return {
    role: v.APP_ROLE,
    nodeEnv: v.NODE_ENV,
    port: v.PORT,
    host: v.HOST,
    publicBaseUrl: v.PUBLIC_BASE_URL,
    docsUrl: e.DOCS_URL ?? v.PUBLIC_BASE_URL,
    databaseUrl: v.DATABASE_URL,
    redisUrl: v.REDIS_URL,
    redisClusterNodes: v.REDIS_CLUSTER_NODES,
    redisPrefix: v.REDIS_PREFIX,
    idp: devIdp
      ? {
          projectId: undefined,
          jwksUrl: `${v.PUBLIC_BASE_URL}/dev-idp/jwks.json`,
          issuer: `${v.PUBLIC_BASE_URL}/dev-idp`,
          audience: DEV_IDP_AUDIENCE,
          jwksCooldownMs: 0,
        }
      : {
          projectId: e.IDP_PROJECT_ID,
          jwksUrl: e.IDP_JWKS_URL ?? FIREBASE_JWKS,
          issuer: e.IDP_ISSUER ?? `https://securetoken.google.com/${idpProject}`,
          audience: e.IDP_AUDIENCE ?? idpProject,
          jwksCooldownMs: v.IDP_JWKS_COOLDOWN_SECONDS * 1000,
        },
    devIdp,
    firebaseWeb:
      e.FIREBASE_API_KEY && e.IDP_PROJECT_ID
        ? {
            apiKey: e.FIREBASE_API_KEY,
            authDomain: e.FIREBASE_AUTH_DOMAIN ?? `${e.IDP_PROJECT_ID}.firebaseapp.com`,
            projectId: e.IDP_PROJECT_ID,
          }
        : undefined,
    platformTokenTtlSeconds: v.PLATFORM_TOKEN_TTL_SECONDS,
    packageInactivityDays: v.PACKAGE_INACTIVITY_DAYS,
    anonymousPerMinute: v.ANONYMOUS_RATE_LIMIT_PER_MINUTE,
    platformLimits: { perMinute: v.PLATFORM_RATE_LIMIT_PER_MINUTE, burstPerSecond: v.PLATFORM_BURST_PER_SECOND },
    enterpriseLimits: { perMinute: v.RATE_LIMIT_ENTERPRISE_PER_MINUTE, perDay: v.RATE_LIMIT_ENTERPRISE_PER_DAY },
    agentLlm: { url: e.AGENT_LLM_URL, model: v.AGENT_LLM_MODEL, apiKey: e.AGENT_LLM_API_KEY },
    tokenSigningKey: e.TOKEN_SIGNING_KEY,
    encryptionKey: e.ENCRYPTION_KEY,
    smtpUrl: e.SMTP_URL,
    operatorToken: e.OPERATOR_TOKEN,
    metricsToken: e.METRICS_TOKEN,
    allowPrivateTargets: v.ALLOW_PRIVATE_TARGETS,
    webhookDeliveryIps: v.WEBHOOK_DELIVERY_IPS,
    webhooks: {
      retryBaseMs: v.WEBHOOK_RETRY_BASE_MS,
      endpointConcurrency: v.WEBHOOK_ENDPOINT_CONCURRENCY,
      disableAfterSeconds: v.WEBHOOK_DISABLE_AFTER_SECONDS,
      secretGraceSeconds: v.WEBHOOK_SECRET_GRACE_SECONDS,
      sweepIntervalMs: v.WEBHOOK_SWEEP_INTERVAL_MS,
    },
    logLevel: v.LOG_LEVEL,
    workerHealthPort: v.WORKER_HEALTH_PORT,
    eventSweepIntervalMs: v.EVENT_SWEEP_INTERVAL_MS,
    backbone: {
      eventDrains: v.EVENT_DRAINS,
      eventBatchSize: v.EVENT_BATCH_SIZE,
      relays: v.JOB_RELAYS,
      relayBatchSize: v.JOB_RELAY_BATCH_SIZE,
      relaySweepMs: v.JOB_RELAY_SWEEP_MS,
      relayCheckAfterMs: v.JOB_RELAY_CHECK_AFTER_MS,
      relayRetryFailedMs: v.JOB_RELAY_RETRY_FAILED_MS,
    },
    runtimeBridge: {
      timeoutMs: v.RUNTIME_TIMEOUT_MS,
      retryBaseMs: v.RUNTIME_RETRY_BASE_MS,
      retryBudgetMs: v.RUNTIME_RETRY_BUDGET_MS,
      tickMs: v.RUNTIME_TICK_MS,
      reconnectBaseMs: v.REALTIME_RECONNECT_BASE_MS,
      devSessionRenewMs: v.DEV_SESSION_RENEW_MS,
    },
    gateway: {
      heartbeatMs: v.GATEWAY_HEARTBEAT_MS,
      expiryNoticeSeconds: v.GATEWAY_EXPIRY_NOTICE_SECONDS,
      framesPerSecond: v.GATEWAY_FRAMES_PER_SECOND,
      frameBurst: v.GATEWAY_FRAME_BURST,
    },
  };
}
