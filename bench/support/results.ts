import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where a bench writes its result file; `npm run bench` points every bench at one directory and merges them. */
export const RESULTS_DIR = process.env.BENCH_RESULTS_DIR ?? join(__dirname, '..', 'results');

export interface Table {
  caption?: string;
  columns: string[];
  rows: Array<Array<string | number>>;
}

/** One of the targets, judged by the bench that measures it. */
export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean;
}

export interface BenchResult {
  bench: string;
  title: string;
  /** The command that runs this bench alone. */
  command: string;
  /** What the baseline is, in words. */
  baseline: string;
  params: Record<string, unknown>;
  rows: object[];
  tables: Table[];
  targets: TargetCheck[];
  /** Bench-specific data (the latency curve of the HTTP bench, for the plot). */
  extra?: Record<string, unknown>;
  notes?: string[];
}

export function writeResult(result: BenchResult): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${result.bench}.json`);
  writeFileSync(file, `${JSON.stringify({ at: new Date().toISOString(), node: process.version, ...result }, null, 2)}\n`);
  console.log(`written ${file}`);
  return file;
}

/** Nearest-rank percentile of ascending samples. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const round = (value: number, digits = 2): number => Number(value.toFixed(digits));

export function summarise(samples: number[]): { count: number; p50Ms: number; p99Ms: number; maxMs: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted[sorted.length - 1] ?? Number.NaN),
  };
}

export const ratio = (value: number, base: number, digits = 3): number => round(value / base, digits);
