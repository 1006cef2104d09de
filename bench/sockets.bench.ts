import { ChildProcess, fork } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OPERATOR_TOKEN, SpawnedRole, TestEnvironment } from '../test/support/harness';
import { TestIdentityProvider } from '../test/support/identity-provider';
import { LoggedInUser, login, raiseToEnterprise } from '../test/support/users';
import { profileFile, spawnApi, stopGracefully } from './support/roles';
import { formatProfile, summariseProfile, writeSummary } from './support/profile';
import { percentile, round, writeResult } from './support/results';

/**
 * Idle authenticated gateway sockets on one api instance: `dist/main.js` as
 * the api role in its own process (`LOG_LEVEL=warn`, default gateway
 * settings: a 25 s server heartbeat), no worker (nothing here needs one).
 * BENCH_SOCKETS WebSocket clients (the `ws` package) run in a child process of
 * their own (bench/support/socket-clients.js), so the client load shares
 * neither the bench's event loop nor its descriptors; they open
 * `/v1/gateway?token=…` in batches of BENCH_SOCKETS_BATCH and each waits for
 * its `ready` frame. A user may hold 100 sockets on the Enterprise tier (5 on
 * Free; src/modules/gateway/gateway-connections.service.ts), so the users are
 * moved to Enterprise through the operator API and hold PER_USER sockets each.
 *
 * Memory: the api process's RSS (/proc/<pid>/status VmRSS) and V8 heap used
 * (`service_nodejs_heap_size_used_bytes` from `GET /metrics`), each the median
 * of three samples a second apart, after the users signed in and again after
 * every socket is open and idle; per socket = (after − before) / sockets.
 * Heartbeat: over BENCH_SOCKETS_SECONDS every open socket sends one `ping`
 * frame, spread evenly over the window; latency is `ping` written → `pong`
 * read, in the clients' process. Every socket must stay open to the end.
 *   npm run bench:sockets   (BENCH_SOCKETS, default 10000; BENCH_SOCKETS_SECONDS, default 30)
 *   BENCH_PROFILE=1 npm run bench:sockets   also CPU-profiles the api process over the whole run
 * Needs `npm run build` first (`npm run bench` does it).
 */
const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 10_000);
const SECONDS = Number(process.env.BENCH_SOCKETS_SECONDS ?? 30);
const BATCH = Number(process.env.BENCH_SOCKETS_BATCH ?? 200);
/** Sockets per user: under the Enterprise tier's 100 connections per user. */
const PER_USER = 80;
/** Idle time before each memory reading, so the last opens' work has settled. */
const SETTLE_MS = 5_000;
const PROFILE = process.env.BENCH_PROFILE === '1';
const PROFILE_NAME = 'sockets-api';
const MiB = 1024 * 1024;

interface Memory {
  rssBytes: number;
  heapUsedBytes: number | null;
}

async function inBatches<T, R>(items: T[], concurrency: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index], index);
      }
    }),
  );
  return results;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** RSS from /proc and heap used from the api's Prometheus metrics: the median of three samples a second apart. */
async function memoryOf(pid: number, url: string): Promise<Memory> {
  const rss: number[] = [];
  const heap: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    if (i > 0) await new Promise((r) => setTimeout(r, 1_000));
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    rss.push(Number(kb) * 1024);
    const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
    const text = await res.text();
    const used = /^service_nodejs_heap_size_used_bytes (\S+)$/m.exec(text)?.[1];
    if (res.status === 200 && used) heap.push(Number(used));
  }
  return { rssBytes: median(rss), heapUsedBytes: heap.length > 0 ? median(heap) : null };
}

/** The clients' process: one command at a time, one answer each. */
class Clients {
  private answers: Array<(value: unknown) => void> = [];
  private constructor(readonly child: ChildProcess) {
    child.on('message', (message) => this.answers.shift()?.(message));
  }

  static async start(): Promise<Clients> {
    const child = fork(join(__dirname, 'support', 'socket-clients.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const clients = new Clients(child);
    await new Promise<void>((resolve, reject) => {
      clients.answers.push(() => resolve());
      child.once('exit', (code) => reject(new Error(`the clients' process exited (${code}) before starting`)));
    });
    return clients;
  }

  ask<T>(command: Record<string, unknown>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the clients' process exited (${code}) during ${String(command.cmd)}`));
      this.child.once('exit', onExit);
      this.answers.push((value) => {
        this.child.off('exit', onExit);
        const error = (value as { error?: string }).error;
        if (error) reject(new Error(`the clients' process failed ${String(command.cmd)}: ${error}`));
        else resolve(value as T);
      });
      this.child.send(command);
    });
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    await this.ask({ cmd: 'close' }).catch(() => undefined);
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000).unref())]);
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

it('holds idle authenticated gateway sockets on one api instance: memory per socket and heartbeat latency', async () => {
  const idp = await TestIdentityProvider.start();
  const env = await TestEnvironment.create({ ...idp.env, LOG_LEVEL: 'warn' });
  let api: SpawnedRole | undefined;
  let clients: Clients | undefined;
  try {
    const spawned = await spawnApi(env, 'the api', { enabled: PROFILE, name: PROFILE_NAME });
    api = spawned.role;
    const url = spawned.url;
    const pid = api.child.pid!;
    const began = Date.now();
    const progress = (what: string) => console.info(`sockets bench: ${what} after ${Math.round((Date.now() - began) / 1000)} s`);

    const userCount = Math.ceil(SOCKETS / PER_USER);
    const users: LoggedInUser[] = await inBatches(Array.from({ length: userCount }), 10, async (_, i) => {
      const user = await login(url, idp, { sub: `bench-socket-${i}`, name: `Bench ${i}`, email: `bench-socket${i}@example.com` });
      await raiseToEnterprise(url, user);
      return user;
    });
    // One socket opened and closed first, so the first-connection work (code paths, pools, subscriber) is not counted per socket.
    clients = await Clients.start();
    const warm = await clients.ask<{ opened: number }>({
      cmd: 'open',
      base: url,
      tokens: [users[0].token],
      perToken: 1,
      count: 1,
      batch: 1,
    });
    if (warm.opened !== 1) throw new Error('the warm-up socket did not open');
    await clients.close();
    progress(`${userCount} users signed in (Enterprise tier)`);

    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const before = await memoryOf(pid, url);
    clients = await Clients.start();
    const opened = await clients.ask<{ opened: number; failed: number; errors: Record<string, number>; ms: number }>({
      cmd: 'open',
      base: url,
      tokens: users.map((u) => u.token),
      perToken: PER_USER,
      count: SOCKETS,
      batch: BATCH,
    });
    progress(
      `${opened.opened} sockets open in ${opened.ms} ms (${opened.failed} failed${opened.failed ? `: ${JSON.stringify(opened.errors)}` : ''})`,
    );
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const after = await memoryOf(pid, url);
    const heartbeat = await clients.ask<{
      sent: number;
      latencies: number[];
      slow: Array<{ atS: number; ms: number }>;
      missing: number;
      open: number;
      closes: Record<string, number>;
    }>({ cmd: 'ping', seconds: SECONDS, graceMs: 10_000 });
    const status = await clients.ask<{ open: number; closes: Record<string, number> }>({ cmd: 'status' });
    progress(`${heartbeat.latencies.length} pings answered over ${SECONDS} s; ${status.open} sockets still open`);
    await clients.close();
    clients = undefined;
    const apiAlive = api.child.exitCode === null;

    const notes: string[] = [];
    if (heartbeat.slow.length > 0) {
      // When the slow answers came (whole seconds into the window): a cluster points at a pause of the api, not at the sockets.
      const bySecond = new Map<number, { n: number; max: number }>();
      for (const { atS, ms } of heartbeat.slow) {
        const second = Math.floor(atS);
        const seen = bySecond.get(second) ?? { n: 0, max: 0 };
        bySecond.set(second, { n: seen.n + 1, max: Math.max(seen.max, ms) });
      }
      notes.push(
        `${heartbeat.slow.length} of ${heartbeat.latencies.length} pings took 50 ms or more; by the second of the window they were sent in ` +
          `(second: pings, slowest ms): ${[...bySecond.entries()].map(([second, { n, max }]) => `${second} s: ${n}, ${max}`).join('; ')}`,
      );
      console.info(notes[notes.length - 1]);
    }
    await stopGracefully(api.child, 'the api');
    if (PROFILE && existsSync(profileFile(PROFILE_NAME))) {
      const summary = summariseProfile(profileFile(PROFILE_NAME));
      writeSummary(PROFILE_NAME, summary);
      notes.push(formatProfile('CPU profile of the api process (dist/main.js) over the whole run', summary));
    }

    const sorted = [...heartbeat.latencies].sort((a, b) => a - b);
    const ping = {
      count: sorted.length,
      p50Ms: round(percentile(sorted, 50)),
      p99Ms: round(percentile(sorted, 99)),
      maxMs: round(sorted[sorted.length - 1] ?? Number.NaN),
    };
    const perSocket = (a: number | null, b: number | null) => (a === null || b === null ? null : Math.round((b - a) / opened.opened));
    const rssPerSocket = perSocket(before.rssBytes, after.rssBytes);
    const heapPerSocket = perSocket(before.heapUsedBytes, after.heapUsedBytes);
    const allStayed = opened.opened === SOCKETS && status.open === SOCKETS && heartbeat.missing === 0 && apiAlive;
    const mib = (bytes: number | null) => (bytes === null ? 'n/a' : round(bytes / MiB, 1));
    const kib = (bytes: number | null) => (bytes === null ? 'n/a' : round(bytes / 1024, 1));
    const rows = [
      {
        target: 'api process memory',
        sockets: opened.opened,
        rssBeforeMiB: mib(before.rssBytes),
        rssAfterMiB: mib(after.rssBytes),
        rssPerSocketKiB: kib(rssPerSocket),
        heapBeforeMiB: mib(before.heapUsedBytes),
        heapAfterMiB: mib(after.heapUsedBytes),
        heapPerSocketKiB: kib(heapPerSocket),
      },
      {
        target: `ping → pong, every socket once over ${SECONDS} s`,
        sockets: heartbeat.sent,
        ...ping,
        unanswered: heartbeat.missing,
        openAtEnd: status.open,
      },
    ];
    console.table(rows);
    writeResult({
      bench: 'sockets',
      title: 'Gateway: idle authenticated sockets on one api instance',
      command: 'npm run bench:sockets',
      baseline: 'the api process before the sockets opened (signed-in users, one socket opened and closed)',
      params: { sockets: SOCKETS, users: userCount, socketsPerUser: PER_USER, batch: BATCH, heartbeatWindowSeconds: SECONDS },
      rows,
      tables: [
        {
          caption: `${SOCKETS} WebSocket clients (${userCount} Enterprise users, ${PER_USER} sockets each) opened to one api process (dist/main.js, default gateway settings) from a separate clients' process, ${BATCH} at a time, each waiting for \`ready\`; opening took ${round(opened.ms / 1000, 1)} s. Memory is the api process's RSS (/proc) and V8 heap used (GET /metrics), each the median of three samples, ${SETTLE_MS / 1000} s after the users signed in and ${SETTLE_MS / 1000} s after the last socket opened.`,
          columns: ['measure', 'before', 'after', 'per socket'],
          rows: [
            ['RSS (MiB; per socket KiB)', mib(before.rssBytes), mib(after.rssBytes), kib(rssPerSocket)],
            ['V8 heap used (MiB; per socket KiB)', mib(before.heapUsedBytes), mib(after.heapUsedBytes), kib(heapPerSocket)],
          ],
        },
        {
          caption: `Heartbeat: every open socket sends one application \`ping\` frame, spread evenly over ${SECONDS} s (about ${Math.round(heartbeat.sent / SECONDS)} a second), while the rest stay idle; latency is \`ping\` written → \`pong\` read in the clients' process. The service's own 25 s WebSocket ping runs meanwhile.`,
          columns: ['sockets', 'pongs', 'p50 ms', 'p99 ms', 'max ms', 'unanswered', 'open at the end', 'closed by the server'],
          rows: [
            [
              heartbeat.sent,
              ping.count,
              ping.p50Ms,
              ping.p99Ms,
              ping.maxMs,
              heartbeat.missing,
              status.open,
              Object.entries(status.closes)
                .map(([code, n]) => `${n} × ${code}`)
                .join(', ') || 'none',
            ],
          ],
        },
      ],
      notes,
      targets: [
        {
          target: '10,000 idle authenticated sockets on one api instance',
          // The issue sets no number for the heartbeat: its p99 is reported here, beside the verdict on the sockets.
          measured: `${opened.opened} of ${SOCKETS} opened, ${status.open} open at the end; ${kib(rssPerSocket)} KiB RSS and ${kib(heapPerSocket)} KiB heap per socket; heartbeat ping → pong p99 ${ping.p99Ms} ms (p50 ${ping.p50Ms}, max ${ping.maxMs})`,
          met: allStayed && SOCKETS >= 10_000,
        },
      ],
    });
    expect(opened.opened).toBe(SOCKETS);
    expect(status.open).toBe(SOCKETS);
    expect(heartbeat.missing).toBe(0);
  } finally {
    await clients?.close();
    if (api) await stopGracefully(api.child, 'the api', 10_000);
    await env.close();
    await idp.close();
  }
});
