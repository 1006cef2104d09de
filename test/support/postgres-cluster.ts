import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port';

const run = promisify(execFile);
const PG_ROOT = '/usr/lib/postgresql';

/** The newest installed server's bin directory (Debian layout), or wherever `pg_ctl` is on the PATH. */
function binDir(): string {
  if (existsSync(PG_ROOT)) {
    const versions = readdirSync(PG_ROOT)
      .filter((v) => existsSync(join(PG_ROOT, v, 'bin', 'pg_ctl')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions.length > 0) return join(PG_ROOT, versions[0], 'bin');
  }
  try {
    return execFileSync('sh', ['-c', 'dirname "$(command -v pg_ctl)"'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(`no PostgreSQL server binaries: neither ${PG_ROOT}/<version>/bin nor pg_ctl on the PATH`);
  }
}

/** PostgreSQL refuses to run as root: as root, its commands run as the `postgres` user. */
const asRoot = process.getuid?.() === 0;

function command(bin: string, args: string[]): [string, string[]] {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
}

/**
 * A private PostgreSQL cluster (initdb into a temporary directory, trust
 * authentication, its own port on 127.0.0.1 and its own socket directory) that
 * a fault test may stop and start without disturbing the shared server.
 * `destroy` stops it and removes the directory; it is also called at process
 * exit, so an interrupted test does not leave a postmaster behind.
 */
export class PostgresCluster {
  private readonly bin = binDir();
  private destroyed = false;
  private readonly onExit = () => this.destroySync();

  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  static async create(): Promise<PostgresCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
    if (asRoot) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
      chownSync(dir, uid, gid);
    }
    const cluster = new PostgresCluster(dir, await freePort());
    process.once('exit', cluster.onExit);
    try {
      await cluster.exec('initdb', ['-D', cluster.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'], 60_000);
    } catch (error) {
      await cluster.destroy();
      throw error;
    }
    return cluster;
  }

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Starts the server and waits until it accepts connections. */
  async start(): Promise<void> {
    const options = [
      `-p ${this.port}`,
      `-k ${this.dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c fsync=off',
      '-c max_connections=50',
      '-c shared_buffers=32MB',
    ].join(' ');
    await this.exec('pg_ctl', ['-D', this.dataDir, '-l', join(this.dir, 'server.log'), '-o', options, '-w', '-t', '60', 'start'], 70_000);
  }

  /** Stops the server; `fast` (the default) disconnects every client and shuts down cleanly. */
  async stop(mode: 'smart' | 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.exec('pg_ctl', ['-D', this.dataDir, '-m', mode, '-w', '-t', '60', 'stop'], 70_000);
  }

  get running(): boolean {
    return existsSync(join(this.dataDir, 'postmaster.pid'));
  }

  log(): string {
    try {
      return readFileSync(join(this.dir, 'server.log'), 'utf8');
    } catch {
      return '';
    }
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    if (this.running) await this.stop('immediate').catch(() => undefined);
    this.destroyed = true;
    process.off('exit', this.onExit);
    rmSync(this.dir, { recursive: true, force: true });
  }

  private destroySync(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    if (this.running) {
      const [file, args] = command(join(this.bin, 'pg_ctl'), ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']);
      try {
        execFileSync(file, args, { stdio: 'ignore', timeout: 30_000 });
      } catch {
        /* best effort at exit */
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async exec(tool: string, args: string[], timeoutMs: number): Promise<void> {
    const [file, fullArgs] = command(join(this.bin, tool), args);
    try {
      await run(file, fullArgs, { cwd: this.dir, timeout: timeoutMs });
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      throw new Error(
        `${tool} ${args.join(' ')} failed: ${(error as Error).message}\n${stdout ?? ''}${stderr ?? ''}\n${this.log().slice(-2000)}`,
      );
    }
  }
}
