import { makeExactValidator } from 'envalid';
import { isIP } from 'node:net';

/**
 * The schema of the environment: every variable the service reads, its parser, default and meaning, in one table
 * (CONVENTIONS.md "Configuration", docs/operations.md). `loadConfig` (app-config.ts) runs it with envalid and
 * turns the cleaned values into the typed `AppConfig`; rules that span several variables live there.
 *
 * A parser throws an Error whose message completes the sentence "<VARIABLE> …", so each problem names its
 * variable. envalid hands defaults through unparsed, so every default here is already in its parsed form.
 */

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const ROLES = ['api', 'worker', 'all'] as const;
export const FIREBASE_JWKS = 'https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com';

const oneOf = <T extends string>(allowed: readonly T[], fallback: T, desc: string) =>
  makeExactValidator<T>((raw) => {
    if (!allowed.includes(raw as T)) throw new Error(`must be one of ${allowed.join(', ')} (got "${raw}")`);
    return raw as T;
  })({ default: fallback, desc });

const port = (fallback: number, desc: string) =>
  makeExactValidator<number>((raw) => {
    const n = Number(raw);
    // 0 asks the system for a free port (tests); the listener reports the one it got.
    if (!/^\d+$/.test(raw) || n > 65535) throw new Error(`must be a TCP port number (got "${raw}")`);
    return n;
  })({ default: fallback, desc });

const int = (fallback: number, min: number, max: number, desc: string) =>
  makeExactValidator<number>((raw) => {
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max) throw new Error(`must be an integer from ${min} to ${max} (got "${raw}")`);
    return n;
  })({ default: fallback, desc });

const bool = (fallback: boolean, desc: string) =>
  makeExactValidator<boolean>((raw) => {
    if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
    if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
    throw new Error(`must be true or false (got "${raw}")`);
  })({ default: fallback, desc });

/** An absolute URL of one of `protocols`, without trailing slashes (they are joined to paths). */
const parseUrl = (raw: string, protocols: string[]): string => {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new Error(`must be an absolute URL (got "${raw}")`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new Error(`must use ${protocols.map((p) => p.replace(':', '')).join(' or ')} (got "${parsed.protocol.replace(':', '')}")`);
  }
  return raw.replace(/\/+$/, '');
};
const url = (fallback: string, protocols: string[], desc: string) =>
  makeExactValidator<string>((raw) => parseUrl(raw, protocols))({ default: fallback, desc });
const optionalUrl = (protocols: string[], desc: string) =>
  makeExactValidator<string>((raw) => parseUrl(raw, protocols))({ default: undefined, desc });

const text = (desc: string) => makeExactValidator<string>((raw) => raw)({ default: undefined, desc });
const secret = (desc: string) =>
  makeExactValidator<string>((raw) => {
    if (raw.length < 16) throw new Error('must be at least 16 characters');
    return raw;
  })({ default: undefined, desc });

/** A comma-separated list; a bad entry is named in the message (the first, as the operator fixes one at a time). */
const list = <T>(raw: string, parse: (entry: string) => T | undefined, what: string): T[] => {
  const entries = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return entries.map((entry) => {
    const parsed = parse(entry);
    if (parsed === undefined) throw new Error(`must be a comma-separated list of ${what} (bad entry "${entry}")`);
    return parsed;
  });
};

export interface CidrRanges {
  ipv4: string[];
  ipv6: string[];
}
const cidrRanges = makeExactValidator<CidrRanges>((raw) => {
  const ranges: CidrRanges = { ipv4: [], ipv6: [] };
  const cidrs = list(
    raw,
    (cidr) => {
      const [address, bits] = cidr.split('/');
      const family = isIP(address);
      const max = family === 4 ? 32 : 128;
      return family === 0 || bits === undefined || !/^\d+$/.test(bits) || Number(bits) > max ? undefined : { cidr, family };
    },
    'CIDR ranges',
  );
  for (const { cidr, family } of cidrs) (family === 4 ? ranges.ipv4 : ranges.ipv6).push(cidr);
  return ranges;
});

export interface SeedNode {
  host: string;
  port: number;
}
const seedNodes = makeExactValidator<SeedNode[]>((raw) =>
  list(
    raw,
    (entry) => {
      // host:port, or [ipv6]:port
      const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(entry);
      const host = match?.[1] ?? match?.[2];
      const nodePort = Number(match?.[3]);
      if (!match || !host || (match[1] !== undefined && isIP(host) !== 6) || nodePort < 1 || nodePort > 65535) return undefined;
      return { host, port: nodePort };
    },
    'host:port seed nodes',
  ),
);

/** The environment, variable by variable. */
export const ENV_SCHEMA = {
  NODE_ENV: makeExactValidator<string>((raw) => raw)({
    default: 'development',
    desc: '`production` makes ENCRYPTION_KEY and an identity provider required',
  }),
  APP_ROLE: oneOf(ROLES, 'all', 'process role: api, worker or all (both in one process)'),
  PORT: port(3000, 'HTTP listener of the api role'),
  HOST: makeExactValidator<string>((raw) => {
    if (isIP(raw) === 0 && !/^[a-zA-Z0-9.-]+$/.test(raw)) throw new Error(`must be an IP address or host name (got "${raw}")`);
    return raw;
  })({ default: '0.0.0.0', desc: 'address the api (and the worker health port) listen on' }),
  PUBLIC_BASE_URL: url('http://localhost:3000', ['http:', 'https:'], '{base_url} in returned URLs'),
  // Unset: PUBLIC_BASE_URL, as the service serves its developer docs (`/developers/…`, modules/developer-docs).
  DOCS_URL: optionalUrl(['http:', 'https:'], '{docs_url} in problem type URIs (default: PUBLIC_BASE_URL)'),
  DATABASE_URL: makeExactValidator<string>((raw) => {
    const value = parseUrl(raw, ['postgres:', 'postgresql:']);
    const name = new URL(value).pathname.replace(/^\//, '');
    // The database is created at start-up when missing, so its name goes into a CREATE DATABASE statement.
    if (!/^[A-Za-z0-9_-]{1,63}$/.test(name)) throw new Error(`must name a database of letters, digits, _ or - (got "${name}")`);
    return value;
  })({ default: 'postgres://postgres@127.0.0.1:5432/service', desc: 'PostgreSQL; the database is created if missing' }),
  REDIS_URL: url('redis://127.0.0.1:6379', ['redis:', 'rediss:'], 'queues, rate limits, caches, gateway fan-out'),
  REDIS_CLUSTER_NODES: seedNodes({ default: [], desc: 'seed nodes of a Redis Cluster; REDIS_URL then lends only its credentials and TLS' }),
  REDIS_PREFIX: makeExactValidator<string>((raw) => {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(raw)) throw new Error('must be 1-64 letters, digits, dots, dashes or underscores');
    return raw;
  })({ default: 'svc', desc: 'prefix of every Redis key, so deployments or test runs can share a server' }),
  IDP_PROJECT_ID: text('Firebase project whose ID tokens sign users in'),
  IDP_JWKS_URL: optionalUrl(['http:', 'https:'], "identity provider's keys (default: Firebase's)"),
  IDP_ISSUER: text('expected `iss` of ID tokens (default: Firebase issuer of IDP_PROJECT_ID)'),
  IDP_AUDIENCE: text('expected `aud` of ID tokens (default: IDP_PROJECT_ID)'),
  IDP_JWKS_COOLDOWN_SECONDS: int(30, 0, 3600, 'least time between two refetches of the JWKS on an unknown key id'),
  DEV_IDP: makeExactValidator<boolean | 'auto'>((raw) => {
    // `auto` (what `npm start` passes): on in development when no provider is configured, so a fresh checkout can sign in.
    if (raw.toLowerCase() === 'auto') return 'auto';
    if (['true', '1', 'yes'].includes(raw.toLowerCase())) return true;
    if (['false', '0', 'no'].includes(raw.toLowerCase())) return false;
    throw new Error(`must be true or false (got "${raw}")`);
  })({ default: false, desc: 'the built-in development identity provider (refused in production)' }),
  FIREBASE_API_KEY: text('Firebase web sign-in for /app (needs IDP_PROJECT_ID)'),
  FIREBASE_AUTH_DOMAIN: text('Firebase auth domain (default: <IDP_PROJECT_ID>.firebaseapp.com)'),
  TOKEN_SIGNING_KEY: makeExactValidator<string>((raw) => {
    if (!raw.includes('PRIVATE KEY') && !raw.startsWith('{'))
      throw new Error('must be a PKCS#8 PEM or a JWK (JSON) holding an EC P-256 private key');
    return raw;
  })({ default: undefined, desc: 'ES256 key of the service tokens (default: generated once per database, stored encrypted)' }),
  ENCRYPTION_KEY: makeExactValidator<Buffer>((raw) => {
    const key = Buffer.from(raw, 'base64');
    if (key.length !== 32) throw new Error(`must be 32 bytes encoded in base64 (got ${key.length} bytes)`);
    return key;
  })({ default: undefined, desc: '32-byte key (base64) for secrets at rest; required in production' }),
  SMTP_URL: optionalUrl(['smtp:', 'smtps:'], 'mail transport (unset: mail is logged and kept in the outbox)'),
  OPERATOR_TOKEN: secret('bearer of the operator API (unset: closed)'),
  METRICS_TOKEN: secret('bearer that may read GET /metrics on the api port'),
  ALLOW_PRIVATE_TARGETS: bool(false, 'allow runtime and webhook URLs on loopback and private ranges (tests, development)'),
  WEBHOOK_DELIVERY_IPS: cidrRanges({ default: { ipv4: [], ipv6: [] }, desc: 'CIDRs published at /.well-known/webhook-ips' }),
  LOG_LEVEL: oneOf(LOG_LEVELS, 'info', 'pino level'),
  PLATFORM_TOKEN_TTL_SECONDS: int(3600, 1, 86_400, 'lifetime of provider platform access tokens'),
  PACKAGE_INACTIVITY_DAYS: int(180, 1, 3650, 'published packages idle this long are suspended'),
  ANONYMOUS_RATE_LIMIT_PER_MINUTE: int(60, 1, 1_000_000, 'unauthenticated calls per client address per minute'),
  PLATFORM_RATE_LIMIT_PER_MINUTE: int(600, 1, 10_000_000, 'provider platform calls per app per minute'),
  PLATFORM_BURST_PER_SECOND: int(10, 1, 100_000, 'provider platform burst per app per second'),
  RATE_LIMIT_ENTERPRISE_PER_MINUTE: int(3000, 1, 10_000_000, 'enterprise tier requests per minute'),
  RATE_LIMIT_ENTERPRISE_PER_DAY: int(1_000_000, 1, 1_000_000_000, 'enterprise tier requests per day'),
  AGENT_LLM_URL: optionalUrl(['http:', 'https:'], 'OpenAI-compatible chat completions endpoint (unset: the built-in composer)'),
  AGENT_LLM_MODEL: makeExactValidator<string>((raw) => raw)({ default: 'gpt-4o-mini', desc: 'model asked for at AGENT_LLM_URL' }),
  AGENT_LLM_API_KEY: text('bearer for AGENT_LLM_URL'),
  WEBHOOK_RETRY_BASE_MS: int(5_000, 1, 3_600_000, 'first webhook retry delay; later ones are multiples of it'),
  WEBHOOK_ENDPOINT_CONCURRENCY: int(4, 1, 1_000, 'webhook deliveries in flight at once to one endpoint'),
  WEBHOOK_DISABLE_AFTER_SECONDS: int(5 * 86_400, 0, 365 * 86_400, 'an endpoint failing every delivery this long is disabled'),
  WEBHOOK_SECRET_GRACE_SECONDS: int(86_400, 0, 30 * 86_400, 'how long a rotated-out signing secret still signs'),
  WEBHOOK_SWEEP_INTERVAL_MS: int(60_000, 100, 3_600_000, 'how often the worker looks for secrets due for rotation'),
  WORKER_HEALTH_PORT: port(3001, "worker role's health and metrics listener (0 disables it)"),
  EVENT_SWEEP_INTERVAL_MS: int(5_000, 100, 3_600_000, 'safety-net sweep of the event outbox'),
  EVENT_DRAINS: int(4, 1, 64, 'concurrent drains of the event outbox per worker'),
  EVENT_BATCH_SIZE: int(500, 1, 10_000, 'events one drain hands to subscribers in one transaction'),
  JOB_RELAYS: int(2, 1, 64, 'concurrent relays of the job outbox per worker'),
  JOB_RELAY_BATCH_SIZE: int(1_000, 1, 10_000, 'job rows one relay moves to BullMQ at once'),
  JOB_RELAY_SWEEP_MS: int(15_000, 100, 3_600_000, "the relay's safety sweep"),
  JOB_RELAY_CHECK_AFTER_MS: int(60_000, 100, 86_400_000, 'a relayed row unfinished this long is checked against BullMQ'),
  JOB_RELAY_RETRY_FAILED_MS: int(60_000, 100, 86_400_000, 'a job failed for good is run again after this, doubling'),
  RUNTIME_TIMEOUT_MS: int(10_000, 100, 300_000, 'response timeout of one runtime call (Free tier: 10 s)'),
  RUNTIME_RETRY_BASE_MS: int(1_000, 1, 300_000, 'base delay of the runtime retry backoff'),
  RUNTIME_RETRY_BUDGET_MS: int(30_000, 0, 600_000, 'longest a caller waits for runtime retries inside one request'),
  RUNTIME_TICK_MS: int(5_000, 100, 3_600_000, 'how often the worker looks for due state polls and realtime subscriptions'),
  REALTIME_RECONNECT_BASE_MS: int(1_000, 10, 300_000, 'base delay before re-opening a dropped realtime stream'),
  DEV_SESSION_RENEW_MS: int(
    15_000,
    100,
    15_000,
    'how often a `soul dev` stream pings, renews its session and checks its credential again (at most 15 s: the CLI counts 45 s of silence as a dropped stream)',
  ),
  GATEWAY_HEARTBEAT_MS: int(25_000, 100, 300_000, 'WebSocket gateway heartbeat interval'),
  GATEWAY_EXPIRY_NOTICE_SECONDS: int(60, 1, 3600, 'notice before a gateway token expires'),
  GATEWAY_FRAMES_PER_SECOND: int(20, 1, 10_000, 'sustained client frames per connection'),
  GATEWAY_FRAME_BURST: int(40, 1, 100_000, 'client frame burst per connection'),
};

export type EnvSchema = typeof ENV_SCHEMA;
