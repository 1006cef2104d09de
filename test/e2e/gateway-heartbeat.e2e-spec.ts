import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import WebSocket from 'ws';
import { SessionCache } from '../../src/modules/access/session-cache';
import { GatewayConnections } from '../../src/modules/gateway/gateway-connections.service';
import { HeartbeatWheel } from '../../src/modules/gateway/heartbeat-wheel';
import { Presence } from '../../src/modules/gateway/presence.service';
import { presenceConnectionsKey } from '../../src/infra/realtime/gateway-channels';
import { GatewayClient } from '../support/gateway-client';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { LoggedInUser, login, raiseToEnterprise } from '../support/users';

const HEARTBEAT_MS = 400;

/**
 * The server heartbeat runs per connection at its own phase of the period (a
 * timer wheel), not for every socket in one turn: a socket that stops answering
 * protocol pings is still dropped after two silent intervals, a live idle one
 * stays open and online across many periods, and the pings of many sockets are
 * spread over the period.
 */
describe('gateway heartbeat (spread over the period)', () => {
  let env: TestEnvironment;
  let idp: TestIdentityProvider;
  let api: { app: NestFastifyApplication; url: string };
  let alice: LoggedInUser;
  const clients: GatewayClient[] = [];

  /** A client that answers protocol pings itself while `answering` is true, and notes when each ping came. */
  async function open(user: LoggedInUser): Promise<{ client: GatewayClient; pings: number[]; answering: { on: boolean } }> {
    const socket = new WebSocket(`${api.url.replace(/^http/, 'ws')}/v1/gateway?token=${encodeURIComponent(user.token)}`, {
      autoPong: false,
    });
    const pings: number[] = [];
    const answering = { on: true };
    socket.on('ping', (data) => {
      pings.push(performance.now());
      if (answering.on) socket.pong(data);
    });
    const client = new GatewayClient(socket);
    clients.push(client);
    await client.next('ready');
    return { client, pings, answering };
  }

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  beforeAll(async () => {
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create({ ...idp.env });
    api = await env.startApi({ env: { GATEWAY_HEARTBEAT_MS: String(HEARTBEAT_MS) } });
    alice = await login(api.url, idp, { sub: 'uid-hb-1', name: 'Alice', email: 'alice.hb@example.com' });
    await raiseToEnterprise(api.url, alice);
  });

  afterEach(() => GatewayClient.terminateAll(clients));

  afterAll(async () => {
    await env?.close();
    await idp?.close();
  });

  it('visits every slot once a period, late turns included, and puts connections in the least loaded slot', () => {
    const visits = new Map<number, number>();
    const wheel = new HeartbeatWheel<number>(1000, (items) => items.forEach((item) => visits.set(item, (visits.get(item) ?? 0) + 1)), 10);
    for (let i = 0; i < 25; i += 1) wheel.add(i);
    wheel.start();
    wheel.stop();
    const start = performance.now();
    // One period in small steps: each item once.
    for (let t = 0; t <= 1001; t += 7) wheel.advance(start + t + 1);
    expect([...visits.values()].every((n) => n === 1)).toBe(true);
    expect(visits.size).toBe(25);
    // The event loop was blocked for several periods: one catch-up visits each slot once, none skipped, none twice.
    visits.clear();
    wheel.advance(start + 4_500);
    expect(visits.size).toBe(25);
    expect([...visits.values()].every((n) => n === 1)).toBe(true);
    wheel.remove(3);
    visits.clear();
    wheel.advance(start + 5_600);
    expect(visits.has(3)).toBe(false);
    expect(visits.size).toBe(24);
  });

  it('closes a client that stops answering protocol pings after two silent intervals, and keeps a live idle one open and online', async () => {
    const live = await open(alice);
    const dying = await open(alice);
    await sleep(HEARTBEAT_MS * 1.5);
    expect(dying.pings.length).toBeGreaterThan(0);
    dying.answering.on = false;
    const stopped = performance.now();
    const closed = await dying.client.closed(HEARTBEAT_MS * 10);
    const after = performance.now() - stopped;
    // Terminated (no close handshake), more than one interval after its last answer and within three intervals of it.
    expect(closed.code).toBe(1006);
    expect(after).toBeGreaterThan(HEARTBEAT_MS);
    expect(after).toBeLessThan(HEARTBEAT_MS * 4);

    // The live one stays across several periods, online all along (its presence entry refreshed before it expires).
    const presence = api.app.get(Presence);
    const pingsBefore = live.pings.length;
    for (let i = 0; i < 12; i += 1) {
      expect(await presence.stateOf([alice.id])).toEqual(['online']);
      await sleep(HEARTBEAT_MS / 2);
    }
    expect(live.pings.length - pingsBefore).toBeGreaterThanOrEqual(4);
    expect(live.client.closedWith).toBeUndefined();
    await live.client.answersPing('still-open');
  });

  it('puts a live connection back in presence at its next heartbeat when Redis lost the entry (a restart, an eviction)', async () => {
    const live = await open(alice);
    const presence = api.app.get(Presence);
    expect(await presence.stateOf([alice.id])).toEqual(['online']);
    const redis = new Redis(env.env.REDIS_URL);
    try {
      await redis.del(presenceConnectionsKey(env.env.REDIS_PREFIX, alice.id));
      expect(await presence.stateOf([alice.id])).toEqual(['offline']);
      // Within a heartbeat period the refresh adds the connection again, with its expiry.
      await sleep(HEARTBEAT_MS * 1.5);
      expect(await presence.stateOf([alice.id])).toEqual(['online']);
      expect(await redis.pttl(presenceConnectionsKey(env.env.REDIS_PREFIX, alice.id))).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
    expect(live.client.closedWith).toBeUndefined();
  });

  it('pings many sockets at different phases of the period, not all in one turn', async () => {
    const opened = [];
    for (let i = 0; i < 16; i += 1) opened.push(await open(alice));
    const since = performance.now();
    await sleep(HEARTBEAT_MS * 2.5);
    // The first ping each socket got after all were open: spread across the period.
    const firsts = opened.map(({ pings }) => pings.find((at) => at >= since)).filter((at): at is number => at !== undefined);
    expect(firsts).toHaveLength(opened.length);
    const phases = new Set(firsts.map((at) => Math.floor((at - since) / 25)));
    expect(phases.size).toBeGreaterThanOrEqual(4);
    expect(Math.max(...firsts) - Math.min(...firsts)).toBeGreaterThan(HEARTBEAT_MS / 4);
    for (const { client } of opened) expect(client.closedWith).toBeUndefined();
  });

  it('re-checks sessions at heartbeat pace while change notifications are down, and all of them when the listener restarts', async () => {
    const cache = api.app.get(SessionCache);
    const first = await Promise.all([open(alice), open(alice), open(alice)]);
    const remembering = jest.spyOn(cache, 'remembering', 'get').mockReturnValue(false);
    const resolve = jest.spyOn(cache, 'resolve').mockResolvedValue(null);
    try {
      for (const { client } of first) expect(await client.closed(HEARTBEAT_MS * 3)).toEqual({ code: 4401, reason: 'session revoked' });
    } finally {
      remembering.mockRestore();
    }
    try {
      const second = await Promise.all([open(alice), open(alice)]);
      resolve.mockClear();
      // The listener (re)starts: every socket is re-checked at once, not at its heartbeat.
      const gateway: GatewayConnections = api.app.get(GatewayConnections);
      (gateway as unknown as { sessionsChanged(userId: string | null): void }).sessionsChanged(null);
      for (const { client } of second) expect(await client.closed(HEARTBEAT_MS / 2)).toEqual({ code: 4401, reason: 'session revoked' });
    } finally {
      resolve.mockRestore();
    }
  });
});
