import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { INestApplicationContext, ModuleMetadata } from '@nestjs/common';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { createApiApp, createWorkerApp } from '../../src/bootstrap';
import { AppConfig, loadConfig } from '../../src/config/app-config';
import { createTestDatabase } from './database';
import { trustService } from './service-keys';

export const OPERATOR_TOKEN = 'operator-token-for-tests-only';
const ROOT = join(__dirname, '../..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { serviceNodeFlags } = require('../../scripts/node-flags.js') as { serviceNodeFlags: () => string[] };
/** The V8 flags of the service's processes, as `npm start` passes them. */
const SERVICE_NODE_FLAGS = serviceNodeFlags();

/**
 * One isolated environment per test file: its own PostgreSQL database (cloned
 * from the migrated template) and its own Redis key prefix.
 */
export class TestEnvironment {
  private readonly closers: Array<() => Promise<unknown>> = [];
  env: Record<string, string> = {};

  static async create(extraEnv: Record<string, string> = {}): Promise<TestEnvironment> {
    const environment = new TestEnvironment();
    const database = await createTestDatabase();
    environment.closers.push(database.drop);
    environment.env = {
      NODE_ENV: 'test',
      DATABASE_URL: database.url,
      REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
      REDIS_PREFIX: `svc_t_${randomBytes(4).toString('hex')}`,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      OPERATOR_TOKEN,
      // Tests pin problem type URIs to this host; developer-docs.e2e-spec.ts removes it to test the default.
      DOCS_URL: 'https://docs.example.com',
      ALLOW_PRIVATE_TARGETS: 'true',
      PORT: '0',
      HOST: '127.0.0.1',
      WORKER_HEALTH_PORT: '0',
      // Every test request comes from 127.0.0.1; per-address limits are exercised where a test sets them.
      ANONYMOUS_RATE_LIMIT_PER_MINUTE: '100000',
      PLATFORM_BURST_PER_SECOND: '100000',
      PLATFORM_RATE_LIMIT_PER_MINUTE: '1000000',
      ...extraEnv,
    };
    environment.closers.push(() => deleteRedisKeys(environment.env.REDIS_URL, environment.env.REDIS_PREFIX));
    return environment;
  }

  config(overrides: Record<string, string> = {}): AppConfig {
    return loadConfig({ ...this.env, ...overrides });
  }

  /** Starts the api role in this process, listening on a free loopback port. */
  async startApi(
    options: { role?: 'api' | 'all'; env?: Record<string, string>; imports?: ModuleMetadata['imports'] } = {},
  ): Promise<{ app: NestFastifyApplication; url: string }> {
    const config = this.config({ APP_ROLE: options.role ?? 'api', ...options.env });
    const app = await createApiApp(config, { imports: options.imports, skipMigrations: true });
    await app.listen({ port: 0, host: '127.0.0.1' });
    this.closers.push(() => app.close());
    const url = await app.getUrl().then((u) => u.replace('[::1]', '127.0.0.1'));
    // The test provider runtime verifies runtime tokens against the keys of the services started here.
    const forget = trustService(url);
    this.closers.push(async () => forget());
    return { app, url };
  }

  /** Starts the worker role in this process. */
  async startWorker(options: { imports?: ModuleMetadata['imports']; env?: Record<string, string> } = {}): Promise<INestApplicationContext> {
    const worker = await createWorkerApp(this.config({ APP_ROLE: 'worker', ...options.env }), {
      imports: options.imports,
      skipMigrations: true,
    });
    this.closers.push(() => worker.close());
    return worker;
  }

  /**
   * Runs a compiled role (`dist/`) as a separate operating-system process, as operators do: with the V8 flags
   * `npm start` passes (scripts/node-flags.js). `nodeArgs` go after them, before the script (`--cpu-prof`).
   */
  spawnRole(entry: 'main' | 'worker', env: Record<string, string> = {}, nodeArgs: string[] = []): SpawnedRole {
    const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...nodeArgs, join(ROOT, 'dist', `${entry}.js`)], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        // The local test CA, so the spawned service trusts the test provider runtimes' certificates.
        ...(process.env.NODE_EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: process.env.NODE_EXTRA_CA_CERTS } : {}),
        ...this.env,
        LOG_LEVEL: 'info',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const role = new SpawnedRole(child);
    this.closers.push(() => role.kill());
    return role;
  }

  async close(): Promise<void> {
    for (const close of this.closers.reverse()) {
      await close().catch((error: unknown) => console.warn('cleanup failed', error));
    }
  }
}

export class SpawnedRole {
  output = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /** Waits until the process has printed a line matching `pattern`. */
  async waitForOutput(pattern: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = this.output.match(pattern);
      if (match) return match;
      if (this.child.exitCode !== null || this.child.signalCode !== null) {
        throw new Error(
          `process exited (${this.child.exitCode ?? this.child.signalCode}) before printing ${pattern}:\n${this.output.slice(-3000)}`,
        );
      }
      if (Date.now() > deadline)
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${pattern}; output so far:\n${this.output.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }
}

async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    // Keys start with the prefix, or with a hash tag that opens with it (`{<prefix>}:bull:…`, `{<prefix>:gateway}:…`).
    for (const pattern of [`${prefix}:*`, `{${prefix}[:}]*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
}
