import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port below 55536 whose cluster bus port (port + 10000) is free too. */
async function clusterPort(taken: Set<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    if (taken.has(port) || taken.has(port + 10_000) || taken.has(port - 10_000)) continue;
    if ((await portFree(port)) && (await portFree(port + 10_000))) {
      taken.add(port);
      return port;
    }
  }
  throw new Error('no free port pair for a Redis Cluster node');
}

/**
 * A private three-primary Redis Cluster on 127.0.0.1 (no replicas, no
 * persistence), in a temporary directory: `redis-server --cluster-enabled yes`
 * three times, then `redis-cli --cluster create`. `stop` kills the servers and
 * removes the directory; it also runs at process exit so an interrupted test
 * leaves no server behind.
 */
export class RedisCluster {
  private readonly exitHook = () => this.kill();

  private constructor(
    readonly ports: number[],
    private readonly dir: string,
    private readonly servers: ChildProcess[],
  ) {
    process.once('exit', this.exitHook);
  }

  /** `REDIS_CLUSTER_NODES` for the service. */
  get nodes(): string {
    return this.ports.map((port) => `127.0.0.1:${port}`).join(',');
  }

  static async start(size = 3): Promise<RedisCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'redis-cluster-'));
    const taken = new Set<number>();
    const ports: number[] = [];
    for (let i = 0; i < size; i += 1) ports.push(await clusterPort(taken));
    const servers = ports.map((port) =>
      spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--cluster-node-timeout',
          '5000',
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
          '--daemonize',
          'no',
        ],
        { stdio: 'ignore' },
      ),
    );
    const cluster = new RedisCluster(ports, dir, servers);
    try {
      for (const port of ports) await cluster.waitFor(port, 'PING', (out) => out.trim() === 'PONG');
      await run('redis-cli', [
        '--cluster',
        'create',
        ...ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ]);
      for (const port of ports) await cluster.waitFor(port, 'CLUSTER INFO', (out) => out.includes('cluster_state:ok'));
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** Runs a command on one node with redis-cli. */
  async cli(port: number, ...args: string[]): Promise<string> {
    const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]);
    return stdout;
  }

  async stop(): Promise<void> {
    process.removeListener('exit', this.exitHook);
    await Promise.all(
      this.servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            if (server.exitCode !== null || server.signalCode !== null) return resolve();
            server.once('exit', () => resolve());
            server.kill('SIGKILL');
          }),
      ),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }

  private kill(): void {
    for (const server of this.servers) if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async waitFor(port: number, command: string, done: (out: string) => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      try {
        last = await this.cli(port, ...command.split(' '));
        if (done(last)) return;
      } catch (error) {
        last = (error as Error).message;
      }
      if (Date.now() > deadline) throw new Error(`Redis Cluster node ${port}: ${command} not satisfied in ${timeoutMs} ms: ${last}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
