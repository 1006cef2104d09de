import { ChildProcess, spawn } from 'node:child_process';
import Redis from 'ioredis';
import { waitFor } from './wait-for';

/** A private `redis-server` on its own port, without persistence: a restart loses every key, queued jobs included. */
export class RedisProcess {
  private child: ChildProcess | null = null;
  private readonly onExit = () => this.child?.kill('SIGKILL');
  constructor(readonly port: number) {
    process.once('exit', this.onExit);
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'], {
      stdio: 'ignore',
    });
    this.child = child;
    const probe = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      await waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
          try {
            if (probe.status !== 'ready') await probe.connect();
            return (await probe.ping()) === 'PONG' ? true : undefined;
          } catch {
            probe.disconnect();
            return undefined;
          }
        },
        { what: `redis-server on port ${this.port}`, timeoutMs: 10_000, intervalMs: 50 },
      );
    } finally {
      probe.disconnect();
    }
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    this.child = null;
  }

  async destroy(): Promise<void> {
    await this.kill();
    process.off('exit', this.onExit);
  }
}
