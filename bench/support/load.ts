import { execFile } from 'node:child_process';
import { join } from 'node:path';

export interface LoadResult {
  requestsPerSecond: number;
  total: number;
  latency: { p50: number; p90: number; p99: number; max: number; mean: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  statuses: Record<string, number>;
  /** CPU milliseconds (user + system) the load generator's process used over the run. */
  cpuMs: number;
}

/** Runs autocannon against `url` from a separate process (bench/support/autocannon-child.js) and answers its summary. */
export function load(url: string, connections: number, durationSeconds: number, headers: Record<string, string> = {}): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join(__dirname, 'autocannon-child.js'), JSON.stringify({ url, connections, duration: durationSeconds, headers })],
      { maxBuffer: 1 << 20, timeout: (durationSeconds + 60) * 1000 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`load generator failed: ${error.message}\n${stderr}`));
        resolve(JSON.parse(stdout) as LoadResult);
      },
    );
  });
}
