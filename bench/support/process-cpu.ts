import { readFileSync } from 'node:fs';

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
