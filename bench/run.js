#!/usr/bin/env node
/**
 * `npm run bench`: every benchmark, one after the other, each in its own Jest
 * process (bench/*.bench.ts with the test harness: real PostgreSQL and Redis,
 * a database per bench). Every bench measures its own baseline in the same
 * run and reports ratios. Then this script merges their result files into
 *
 *   bench/results/latest.json   machine facts and every result row
 *   bench/results/latest.md     the same as Markdown tables, with the targets met or missed
 *   docs/img/me-latency-vs-load.svg   GET /v1/me p50/p99 against connections, with the bare Fastify baseline
 *
 * and replaces the generated section of docs/performance.md. Options:
 *   --only http,webhooks   run some benches; results go to bench/results/partial.* and the docs are left alone
 *   --quick                smaller sizes and shorter rows (a smoke run; also partial)
 *   --profile              also CPU-profile the service under GET /v1/me and the webhook worker (bench/results/profiles/)
 *   --duration <s>         seconds per HTTP row (default 5)
 * Needs `npm run build` first (the webhook bench runs dist/worker.js); `npm run bench` does it.
 */
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- plain node script */
const { spawn, execFileSync } = require('node:child_process');
const { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const { join, relative } = require('node:path');
const { logLogChart } = require('./plot');

const ROOT = join(__dirname, '..');
const RESULTS = join(__dirname, 'results');
const BENCHES = ['http', 'bridge', 'conformance', 'webhooks', 'gateway', 'sockets', 'metrics'];
const QUICK_ENV = {
  BENCH_DURATION: '2',
  BENCH_CALLS: '30',
  BENCH_CONFORMANCE_RUNS: '2',
  BENCH_WEBHOOK_EVENTS: '2000',
  BENCH_WEBHOOK_PACED_EVENTS: '200',
  BENCH_CLIENTS: '200',
  BENCH_MESSAGES_PER_SENDER: '3',
  BENCH_SOCKETS: '2000',
  BENCH_SOCKETS_SECONDS: '10',
  BENCH_METRICS_TRACES: '100000',
};
const GENERATED_START = '<!-- bench:generated:start (npm run bench replaces this section) -->';
const GENERATED_END = '<!-- bench:generated:end -->';

const args = process.argv.slice(2);
const flag = (name) => args.includes(`--${name}`);
const option = (name) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = option('only')
  ?.split(',')
  .map((s) => s.trim());
const quick = flag('quick');
const profile = flag('profile');
const duration = option('duration');
const partial = quick || only !== undefined;
const selected = BENCHES.filter((b) => !only || only.includes(b));
for (const name of only ?? []) if (!BENCHES.includes(name)) throw new Error(`unknown bench "${name}"; known: ${BENCHES.join(', ')}`);

const sh = (file, argv) => {
  try {
    return execFileSync(file, argv, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
};
const loadAverage = () => os.loadavg().map((l) => Number(l.toFixed(2)));

async function machine() {
  const { Client } = require('pg');
  const Redis = require('ioredis');
  const databaseServer = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const pg = new Client({ connectionString: databaseServer });
  let postgres = null;
  try {
    await pg.connect();
    postgres = (await pg.query('SHOW server_version')).rows[0].server_version;
  } finally {
    await pg.end().catch(() => undefined);
  }
  const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
  let redisVersion = null;
  try {
    await redis.connect();
    redisVersion = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? null;
  } finally {
    redis.disconnect();
  }
  const cpus = os.cpus();
  const osRelease = existsSync('/etc/os-release') ? /PRETTY_NAME="([^"]+)"/.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] : null;
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    os: `${osRelease ?? os.type()} (kernel ${os.release()})`,
    node: process.version,
    postgres,
    redis: redisVersion,
    commit: sh('git', ['rev-parse', '--short', 'HEAD']),
    uncommittedChanges: (sh('git', ['status', '--porcelain', '--untracked-files=no']) ?? '') !== '',
  };
}

function runBench(name, resultsDir) {
  const env = {
    ...process.env,
    ...(quick ? QUICK_ENV : {}),
    ...(duration ? { BENCH_DURATION: duration } : {}),
    ...(profile ? { BENCH_PROFILE: '1' } : {}),
    BENCH_RESULTS_DIR: resultsDir,
    NODE_EXTRA_CA_CERTS: join(ROOT, 'tmp', 'test-ca', 'ca.pem'),
  };
  const jest = require.resolve('jest/bin/jest');
  const started = Date.now();
  const loadBefore = loadAverage();
  console.log(`\n=== bench ${name} ===`);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [jest, '--config', 'bench/jest.bench.config.js', '--forceExit', `bench/${name}.bench.ts`], {
      cwd: ROOT,
      env,
      stdio: 'inherit',
    });
    child.once('exit', (code, signal) =>
      resolve({ exitCode: code ?? signal, wallSeconds: Math.round((Date.now() - started) / 1000), loadBefore, loadAfter: loadAverage() }),
    );
  });
}

const cell = (v) => String(v ?? '').replace(/\|/g, '\\|');
function markdownTable(table) {
  const lines = [];
  if (table.caption) lines.push(table.caption, '');
  lines.push(`| ${table.columns.map(cell).join(' | ')} |`, `| ${table.columns.map(() => '---').join(' | ')} |`);
  for (const row of table.rows) lines.push(`| ${row.map(cell).join(' | ')} |`);
  return lines.join('\n');
}

function markdown(report, headingLevel) {
  const h = (n) => '#'.repeat(headingLevel + n - 1);
  const m = report.machine;
  const out = [];
  out.push(
    `${h(1)} Benchmark results`,
    '',
    `Produced by \`${report.command}\` on ${report.finishedAt.slice(0, 10)} (${report.wallSeconds} s in all), commit \`${m.commit}\`${m.uncommittedChanges ? ' with uncommitted changes' : ''}.`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}; Node ${m.node}, PostgreSQL ${m.postgres}, Redis ${m.redis}. ` +
      `The load generator, the service, PostgreSQL and Redis share these cores, and other jobs were running: the load average was ${report.loadBefore.join(' / ')} (1/5/15 min) at the start and ${report.loadAfter.join(' / ')} at the end. ` +
      'Compare ratios to the baseline of the same run, not absolute numbers.',
    '',
    `${h(2)} Targets`,
    '',
    markdownTable({
      columns: ['target', 'measured', 'verdict'],
      rows: report.targets.map((t) => [t.target, t.measured, t.met ? 'met' : 'missed']),
    }),
  );
  for (const name of Object.keys(report.benches)) {
    const b = report.benches[name];
    out.push('', `${h(2)} ${b.title ?? name}`, '');
    if (!b.rows) {
      out.push(
        `Failed (exit ${b.exitCode}) after ${b.wallSeconds} s; no result. Run \`${b.command ?? `npm run bench:${name}`}\` to see why.`,
      );
      continue;
    }
    out.push(
      `\`${b.command}\` (${b.wallSeconds} s${b.exitCode === 0 ? '' : `, exit ${b.exitCode}: an assertion after the measurement failed`}). Baseline: ${b.baseline}.`,
    );
    for (const table of b.tables) out.push('', markdownTable(table));
    for (const note of b.notes ?? []) out.push('', '```text', note, '```');
  }
  return `${out.join('\n')}\n`;
}

function plot(report) {
  const curve = report.benches.http?.extra?.meCurve;
  if (!curve) return null;
  const points = (c, key) => c.connections.map((x, i) => [x, c[key][i]]);
  return logLogChart({
    title: 'GET /v1/me: latency against load',
    subtitle: `${report.finishedAt.slice(0, 10)}, ${report.machine.cores} × ${report.machine.cpu}, ${report.benches.http.params.durationSeconds} s per point (${report.command})`,
    xLabel: 'concurrent connections (autocannon, log scale)',
    yLabel: 'latency, ms (log scale)',
    note: 'autocannon reports whole milliseconds; a 0 (under 1 ms) is drawn at 0.5 ms.',
    series: [
      { label: 'service p50', color: '#1f5fa8', points: points(curve.service, 'p50Ms') },
      { label: 'service p99', color: '#1f5fa8', dashed: true, points: points(curve.service, 'p99Ms') },
      { label: 'bare Fastify p50', color: '#e08a1e', points: points(curve.bare, 'p50Ms') },
      { label: 'bare Fastify p99', color: '#e08a1e', dashed: true, points: points(curve.bare, 'p99Ms') },
    ],
    references: [{ y: 20, label: 'target: p99 < 20 ms at 50 connections' }],
  });
}

async function format(text, parser) {
  const prettier = require('prettier');
  const config = (await prettier.resolveConfig(join(ROOT, 'package.json'))) ?? {};
  return prettier.format(text, { ...config, parser });
}

async function main() {
  const command = `npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}`;
  const startedAt = new Date();
  const runDir = join(RESULTS, `run-${startedAt.toISOString().replace(/[:.]/g, '-')}`);
  mkdirSync(runDir, { recursive: true });
  execFileSync(process.execPath, [join(ROOT, 'test', 'support', 'make-test-ca.js')], { stdio: 'inherit' });
  const facts = await machine();
  const loadBefore = loadAverage();
  const benches = {};
  for (const name of selected) {
    const run = await runBench(name, runDir);
    const file = join(runDir, `${name}.json`);
    const result = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { command: `npm run bench:${name}` };
    benches[name] = { ...result, ...run };
  }
  const finishedAt = new Date();
  const report = {
    command,
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    wallSeconds: Math.round((finishedAt - startedAt) / 1000),
    loadBefore,
    loadAfter: loadAverage(),
    machine: facts,
    targets: Object.values(benches).flatMap((b) => b.targets ?? []),
    benches,
  };

  const base = partial ? 'partial' : 'latest';
  const jsonFile = join(RESULTS, `${base}.json`);
  const mdFile = join(RESULTS, `${base}.md`);
  writeFileSync(jsonFile, await format(JSON.stringify(report), 'json'));
  writeFileSync(mdFile, await format(markdown(report, 1), 'markdown'));
  const svg = plot(report);
  if (svg) writeFileSync(join(runDir, 'me-latency-vs-load.svg'), svg);
  const written = [jsonFile, mdFile];

  if (!partial) {
    if (svg) {
      mkdirSync(join(ROOT, 'docs', 'img'), { recursive: true });
      copyFileSync(join(runDir, 'me-latency-vs-load.svg'), join(ROOT, 'docs', 'img', 'me-latency-vs-load.svg'));
      written.push(join(ROOT, 'docs', 'img', 'me-latency-vs-load.svg'));
    }
    const docFile = join(ROOT, 'docs', 'performance.md');
    const doc = readFileSync(docFile, 'utf8');
    const start = doc.indexOf(GENERATED_START);
    const end = doc.indexOf(GENERATED_END);
    if (start >= 0 && end > start) {
      const section = `${GENERATED_START}\n\n${markdown(report, 2).replace(/^## Benchmark results\n\n/, '')}\n${GENERATED_END}`;
      writeFileSync(docFile, await format(doc.slice(0, start) + section + doc.slice(end + GENERATED_END.length), 'markdown'));
      written.push(docFile);
    } else {
      console.warn(`docs/performance.md has no generated section (${GENERATED_START} … ${GENERATED_END}); left alone`);
    }
  }

  console.log('\n=== targets ===');
  console.table(report.targets.map((t) => ({ target: t.target, measured: t.measured, verdict: t.met ? 'met' : 'missed' })));
  console.log(`\n${report.wallSeconds} s in all; written:\n${written.map((f) => `  ${relative(ROOT, f)}`).join('\n')}`);
  const failed = Object.entries(benches).filter(([, b]) => b.exitCode !== 0);
  if (failed.length > 0) {
    console.error(`failed: ${failed.map(([name, b]) => `${name} (exit ${b.exitCode})`).join(', ')}`);
    process.exitCode = 1;
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
