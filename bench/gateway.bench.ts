import request from 'supertest';
import WebSocket from 'ws';
import { TestEnvironment } from '../test/support/harness';
import { TestIdentityProvider } from '../test/support/identity-provider';
import { LoggedInUser, login } from '../test/support/users';
import { percentile, writeResult } from './support/results';

/**
 * Gateway throughput and latency: CLIENTS sockets split over two api
 * instances (sender on A, its partner on B, so every message crosses
 * instances through the worker and Redis). Each sender sends MESSAGES
 * `message.send` frames; latency is `message.send` written → `message.created`
 * read by the recipient. Baseline in the same run: `ping` → `pong` over the
 * same sockets (transport and frame handling only, no database or worker).
 *   npm run bench:gateway   (BENCH_CLIENTS, default 1000; BENCH_MESSAGES_PER_SENDER, default 5)
 */
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1000);
const MESSAGES = Number(process.env.BENCH_MESSAGES_PER_SENDER ?? 5);
const CONCURRENCY = 25;

interface Socket {
  ws: WebSocket;
  waiters: Map<string, (at: number) => void>;
}

async function inBatches<T, R>(items: T[], work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index], index);
      }
    }),
  );
  return results;
}

function open(base: string, token: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/v1/gateway?token=${encodeURIComponent(token)}`);
    const socket: Socket = { ws, waiters: new Map() };
    ws.on('message', (raw) => {
      const at = performance.now();
      const frame = JSON.parse((raw as Buffer).toString()) as { type: string; id?: string; data: Record<string, unknown> };
      if (frame.type === 'ready') resolve(socket);
      const key =
        frame.type === 'message.created' ? `content:${String(frame.data.content)}` : frame.type === 'pong' ? `pong:${frame.id}` : '';
      socket.waiters.get(key)?.(at);
      socket.waiters.delete(key);
    });
    ws.once('close', (code, reason) => reject(new Error(`closed ${code} ${reason.toString()}`)));
    ws.once('error', reject);
  });
}

const waitFor = (socket: Socket, key: string) => new Promise<number>((resolve) => socket.waiters.set(key, resolve));

function summary(latencies: number[], seconds: number) {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    count: sorted.length,
    per_second: Math.round(sorted.length / seconds),
    p50_ms: Number(percentile(sorted, 50).toFixed(2)),
    p99_ms: Number(percentile(sorted, 99).toFixed(2)),
    max_ms: Number(sorted[sorted.length - 1].toFixed(2)),
  };
}

describe('gateway benchmark', () => {
  it(`${CLIENTS} clients over two instances`, async () => {
    const idp = await TestIdentityProvider.start();
    const env = await TestEnvironment.create(idp.env);
    try {
      const a = await env.startApi();
      const b = await env.startApi();
      await env.startWorker();
      const pairs = Math.floor(CLIENTS / 2);

      const users: LoggedInUser[] = await inBatches(Array.from({ length: pairs * 2 }), (_, i) =>
        login(a.url, idp, { sub: `bench-${i}`, name: `Bench ${i}`, email: `bench${i}@example.com` }),
      );
      const contactIds: string[] = await inBatches(Array.from({ length: pairs }), async (_, i) => {
        const res = await request(a.url)
          .post('/v1/contacts')
          .set(users[2 * i].auth)
          .send({ name: `Partner ${i}`, email: `bench${2 * i + 1}@example.com` })
          .expect(201);
        return res.body.id as string;
      });
      const senders = await inBatches(Array.from({ length: pairs }), (_, i) => open(a.url, users[2 * i].token));
      const receivers = await inBatches(Array.from({ length: pairs }), (_, i) => open(b.url, users[2 * i + 1].token));

      // Baseline: one ping per socket, all at once.
      let started = performance.now();
      const pings = await Promise.all(
        [...senders, ...receivers].map(async (socket, i) => {
          const sent = performance.now();
          const pong = waitFor(socket, `pong:p${i}`);
          socket.ws.send(JSON.stringify({ type: 'ping', id: `p${i}` }));
          return (await pong) - sent;
        }),
      );
      const baseline = summary(pings, (performance.now() - started) / 1000);

      started = performance.now();
      const latencies = (
        await Promise.all(
          senders.map(async (sender, i) => {
            const own: number[] = [];
            for (let m = 0; m < MESSAGES; m++) {
              const content = `bench ${i}/${m}`;
              const created = waitFor(receivers[i], `content:${content}`);
              const sent = performance.now();
              sender.ws.send(JSON.stringify({ type: 'message.send', id: `m${m}`, data: { recipient_id: contactIds[i], content } }));
              own.push((await created) - sent);
            }
            return own;
          }),
        )
      ).flat();
      const messaging = summary(latencies, (performance.now() - started) / 1000);

      for (const socket of [...senders, ...receivers]) socket.ws.terminate();
      const result = {
        clients: pairs * 2,
        instances: 2,
        messages_per_sender: MESSAGES,
        baseline_ping: baseline,
        message_send_to_created: messaging,
      };
      console.log(JSON.stringify(result, null, 2));
      const rows = [
        { target: 'ping → pong (baseline)', ...baseline },
        { target: 'message.send on A → message.created on B', ...messaging },
      ];
      writeResult({
        bench: 'gateway',
        title: `Gateway: ${pairs * 2} WebSocket clients on two api instances`,
        command: 'npm run bench:gateway',
        baseline: '`ping` → `pong` over the same sockets, all at once (transport and frame handling only)',
        params: { clients: pairs * 2, instances: 2, messagesPerSender: MESSAGES, senders: pairs },
        rows,
        tables: [
          {
            caption: `Every sender on instance A sends ${MESSAGES} messages one after the other to its partner on instance B (all senders at once); latency is send → the partner's message.created.`,
            columns: ['target', 'count', 'per second', 'p50 ms', 'p99 ms', 'max ms', 'p99 ratio'],
            rows: rows.map((r) => [
              r.target,
              r.count,
              r.per_second,
              r.p50_ms,
              r.p99_ms,
              r.max_ms,
              Number((r.p99_ms / baseline.p99_ms).toFixed(2)),
            ]),
          },
        ],
        targets: [
          {
            target: `gateway p99 < 50 ms with 1,000 clients on two instances`,
            measured: `p99 ${messaging.p99_ms} ms with ${pairs * 2} clients (${messaging.per_second} messages/s; ping/pong p99 ${baseline.p99_ms} ms)`,
            met: messaging.p99_ms < 50 && pairs * 2 >= 1000,
          },
        ],
      });
      expect(messaging.count).toBe(pairs * MESSAGES);
    } finally {
      await env.close();
      await idp.close();
    }
  });
});
