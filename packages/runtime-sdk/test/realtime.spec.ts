import { createParser, EventSourceMessage } from 'eventsource-parser';
import { defineRuntime, EventStream, Runtime } from '../src';
import { RuntimeTestKit } from '../src/testing';
import { bank } from './bank';
import { serve } from './serve';

/**
 * Realtime streams over a real loopback connection, read with the parser the
 * service's supervisor uses: the headers, heartbeats with `ts` at the
 * declared interval (1 s here), data events, and the end of the stream when
 * the service disconnects.
 */
describe('realtime streams', () => {
  let kit: RuntimeTestKit;
  let runtime: Runtime<typeof bank>;
  let server: { url: string; close: () => Promise<void> };
  let streams: EventStream<{ rate: number }>[];
  let ended: Array<() => void>;

  beforeAll(async () => {
    kit = await RuntimeTestKit.create();
    runtime = defineRuntime({
      descriptor: bank,
      serviceUrl: kit.serviceUrl,
      appId: kit.appId,
      keys: kit.jwks,
      handlers: {
        balance: async () => ({ data: { available: 1, currency: 'EUR' } }),
        transfer: async () => ({ result: { transferId: 't', state: 'completed' as const }, message: 'ok' }),
        transactions: async () => ({ items: [] }),
        ticker: async (stream) => {
          streams.push(stream);
          stream.send({ rate: 1.08 });
          await new Promise<void>((resolve) => stream.signal.addEventListener('abort', () => resolve()));
          ended.forEach((notify) => notify());
        },
      },
    });
    server = await serve(runtime.listener());
  });
  afterAll(() => server.close());
  beforeEach(() => {
    streams = [];
    ended = [];
  });

  async function open(headers?: Record<string, string>) {
    const controller = new AbortController();
    const response = await fetch(`${server.url}/capabilities/ticker/stream`, {
      headers: headers ?? (await kit.headers('realtime')),
      signal: controller.signal,
    });
    const events: Array<{ event: string; data: Record<string, unknown>; at: number }> = [];
    const parser = createParser({
      onEvent: (message: EventSourceMessage) =>
        events.push({ event: message.event ?? 'message', data: JSON.parse(message.data) as Record<string, unknown>, at: Date.now() }),
    });
    const reading = (async () => {
      const reader = response.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
      const decoder = new TextDecoder();
      try {
        for (;;) {
          const chunk = await reader.read();
          if (chunk.done) return;
          parser.feed(decoder.decode(chunk.value, { stream: true }));
        }
      } catch {
        // aborted by the test
      }
    })();
    return { response, events, close: () => controller.abort(), reading };
  }

  const until = async (condition: () => boolean, ms: number) => {
    const deadline = Date.now() + ms;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('answers 200 text/event-stream with no-cache, a heartbeat with ts at once and then every interval, and data events', async () => {
    const stream = await open();
    try {
      expect(stream.response.status).toBe(200);
      expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(stream.response.headers.get('cache-control')).toBe('no-cache');
      await until(() => stream.events.filter((e) => e.event === 'heartbeat').length >= 3, 4_000);
      const heartbeats = stream.events.filter((e) => e.event === 'heartbeat');
      for (const beat of heartbeats) expect(Date.parse(String(beat.data.ts))).not.toBeNaN();
      const gap = heartbeats[2].at - heartbeats[1].at;
      expect(gap).toBeGreaterThan(700);
      expect(gap).toBeLessThan(1_500);
      expect(stream.events.find((e) => e.event === 'data')?.data).toEqual({ rate: 1.08 });
    } finally {
      stream.close();
    }
  });

  it('stops the handler and its heartbeats when the service disconnects', async () => {
    const stream = await open();
    await until(() => streams.length === 1, 2_000);
    const handlerDone = new Promise<void>((resolve) => ended.push(resolve));
    stream.close();
    await handlerDone;
    expect(streams[0].closed).toBe(true);
    streams[0].send({ rate: 2 }); // ignored: nothing is written to a closed stream
  });

  it('refuses a stream without a valid token with 401 JSON, as conformance probes it', async () => {
    const response = await fetch(`${server.url}/capabilities/ticker/stream`, {
      headers: await kit.headers('realtime', { token: await kit.token({ requestId: 'req_s', audience: 'app_other' }), requestId: 'req_s' }),
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ status: 'error', error: { code: 'AUTH_INVALID' } });
    expect(streams).toHaveLength(0);
  });

  it('in development, fails a data event that does not match the responseSchema loudly', () => {
    const errors: unknown[] = [];
    const strict = defineRuntime({
      descriptor: bank,
      serviceUrl: kit.serviceUrl,
      appId: kit.appId,
      keys: kit.jwks,
      onError: (error) => errors.push(error),
      handlers: {
        balance: async () => ({ data: { available: 1, currency: 'EUR' } }),
        transfer: async () => ({ result: { transferId: 't', state: 'completed' as const }, message: 'ok' }),
        transactions: async () => ({ items: [] }),
        // @ts-expect-error: rate must be a number
        ticker: (stream) => stream.send({ rate: 'high' }),
      },
    });
    return (async () => {
      const local = await serve(strict.listener());
      try {
        const response = await fetch(`${local.url}/capabilities/ticker/stream`, { headers: await kit.headers('realtime') });
        const text = await response.text();
        expect(text).not.toContain('event: data');
        expect(String(errors[0])).toContain('data.rate');
      } finally {
        await local.close();
      }
    })();
  });
});
