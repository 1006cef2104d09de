import { readFileSync } from 'node:fs';
import Redis from 'ioredis';
import { Client } from 'pg';
import type { TestEnvironment } from '../../test/support/harness';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds (user + system) a process has used so far, from /proc; null
 * where /proc is missing (not Linux) or the process is gone.
 */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** A named group of processes whose CPU time is measured together (for example every PostgreSQL backend of a database). */
export interface ProcessGroup {
  name: string;
  pids: () => Promise<number[]> | number[];
}

export interface CpuShare {
  name: string;
  cpuSeconds: number;
  /** CPU milliseconds per unit of work (message, request) over the window. */
  msPerUnit: number;
  /** Share of one core over the window. */
  corePct: number;
}

/**
 * Measures how much CPU each group spends over a window of work, so a bench
 * can say where the machine's cores went (the profile of what limits a figure
 * when the service, its database and the load generator share the machine).
 */
export async function measureCpu<T>(
  groups: ProcessGroup[],
  work: () => Promise<T>,
  units: (result: T) => number,
): Promise<{ result: T; seconds: number; shares: CpuShare[] }> {
  const pidsOf = await Promise.all(groups.map(async (g) => g.pids()));
  const before = pidsOf.map((pids) => new Map(pids.map((pid) => [pid, cpuSeconds(pid) ?? 0])));
  const started = performance.now();
  const result = await work();
  const seconds = (performance.now() - started) / 1000;
  const count = Math.max(1, units(result));
  const shares = groups.map((group, i) => {
    const used = pidsOf[i].reduce((sum, pid) => sum + Math.max(0, (cpuSeconds(pid) ?? 0) - (before[i].get(pid) ?? 0)), 0);
    return {
      name: group.name,
      cpuSeconds: Number(used.toFixed(2)),
      msPerUnit: Number(((used * 1000) / count).toFixed(3)),
      corePct: Number(((used / seconds) * 100).toFixed(1)),
    };
  });
  return { result, seconds, shares };
}

/**
 * The processes whose CPU time the bench accounts for: the service's roles,
 * this process (the clients and the identity provider), the PostgreSQL
 * backends serving the bench's database, and Redis.
 */
export async function processGroups(env: TestEnvironment, roles: Array<{ name: string; pid?: number }>): Promise<ProcessGroup[]> {
  const databaseUrl = env.env.DATABASE_URL;
  const database = new URL(databaseUrl).pathname.slice(1);
  const backends = async () => {
    const client = new Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [database],
      );
      return rows.map((r) => r.pid);
    } finally {
      await client.end();
    }
  };
  const redis = new Redis(env.env.REDIS_URL);
  const info = await redis.info('server').finally(() => redis.disconnect());
  const redisPid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  return [
    ...roles.map(({ name, pid }) => ({ name, pids: () => (pid ? [pid] : []) })),
    { name: 'bench clients and identity provider (this process)', pids: () => [process.pid] },
    { name: 'PostgreSQL (backends of the bench database)', pids: backends },
    { name: 'Redis', pids: () => (Number.isFinite(redisPid) ? [redisPid] : []) },
  ];
}
