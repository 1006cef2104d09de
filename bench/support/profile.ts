import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { Session } from 'node:inspector';
import { dirname, join } from 'node:path';
import { RESULTS_DIR } from './results';

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  /** Share of wall time the thread was idle (waiting on I/O). */
  idlePct: number;
  gcPct: number;
  /** Busy time by where the code lives: a package under node_modules, node internals, or the service. */
  byOrigin: Array<{ origin: string; pct: number }>;
  /** Functions with the most self time, as a share of busy time. */
  topFunctions: Array<{ name: string; pct: number }>;
}

export const PROFILES_DIR = join(RESULTS_DIR, 'profiles');

function origin(url: string, functionName: string): string {
  if (functionName === '(garbage collector)') return '(gc)';
  if (functionName === '(program)') return '(program: V8 and native code)';
  if (!url) return '(native)';
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (match) return match[1];
  if (url.startsWith('node:'))
    return `node:${url
      .slice(5)
      .split('/')[0]
      .replace(/^internal$/, 'internal')}`;
  if (/\/(src|dist)\//.test(url)) return 'service code';
  return url;
}

/** Self time by function and by origin from a `.cpuprofile` (Chrome DevTools format, as `--cpu-prof` and the inspector write it). */
export function summariseProfile(file: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i += 1) {
    const delta = profile.timeDeltas[i + 1] ?? 0;
    self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + delta);
  }
  let total = 0;
  let idle = 0;
  let gc = 0;
  const functions = new Map<string, number>();
  const origins = new Map<string, number>();
  for (const [id, us] of self) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    total += us;
    if (functionName === '(idle)') {
      idle += us;
      continue;
    }
    if (functionName === '(garbage collector)') gc += us;
    const where = url ? `${url.replace(/^.*node_modules\//, '').replace(/^.*\/(src|dist|test|bench)\//, '$1/')}:${lineNumber + 1}` : '';
    const name = `${functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    const o = origin(url, functionName);
    origins.set(o, (origins.get(o) ?? 0) + us);
  }
  const busy = total - idle;
  const share = (us: number, of: number) => Number(((100 * us) / of).toFixed(1));
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);
  return {
    file,
    totalMs: Math.round(total / 1000),
    idlePct: share(idle, total),
    gcPct: share(gc, busy),
    byOrigin: sorted(origins)
      .slice(0, 12)
      .map(([o, us]) => ({ origin: o, pct: share(us, busy) })),
    topFunctions: sorted(functions)
      .slice(0, top)
      .map(([name, us]) => ({ name, pct: share(us, busy) })),
  };
}

export function formatProfile(title: string, summary: ProfileSummary): string {
  return [
    `${title}: ${summary.totalMs} ms sampled, idle ${summary.idlePct} % of it; of the busy time GC ${summary.gcPct} %`,
    `busy time by origin: ${summary.byOrigin.map((o) => `${o.origin} ${o.pct} %`).join(', ')}`,
    'top self time (share of busy time):',
    ...summary.topFunctions.map((f) => `  ${f.pct.toFixed(1).padStart(5)} %  ${f.name}`),
  ].join('\n');
}

/** Profiles this process (the in-process service) while `work` runs; writes `<name>.cpuprofile` and its summary. */
export async function profileThisProcess<T>(name: string, work: () => Promise<T>): Promise<{ result: T; summary: ProfileSummary }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, params ?? {}, (error, value) => (error ? reject(error) : resolve(value))),
    );
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 500 });
  await post('Profiler.start');
  let result: T;
  try {
    result = await work();
  } finally {
    const { profile } = (await post('Profiler.stop')) as { profile: CpuProfile };
    session.disconnect();
    mkdirSync(PROFILES_DIR, { recursive: true });
    writeFileSync(join(PROFILES_DIR, `${name}.cpuprofile`), JSON.stringify(profile));
  }
  const summary = summariseProfile(join(PROFILES_DIR, `${name}.cpuprofile`));
  writeSummary(name, summary);
  return { result, summary };
}

export function writeSummary(name: string, summary: ProfileSummary): void {
  const file = join(PROFILES_DIR, `${name}.txt`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${formatProfile(name, summary)}\n`);
  console.log(formatProfile(name, summary));
}
