import type { ServerResponse } from 'node:http';

/**
 * A realtime stream (spec: "Realtime"): `event: data` with a JSON object and
 * `event: heartbeat` with `{ ts }`. The service marks a stream stale after
 * twice `heartbeatInterval` without an event, so heartbeats run by themselves.
 */
export interface EventStream<D = Record<string, unknown>> {
  /** Sends one `data` event. Ignored once the stream is closed. */
  send(data: D): void;
  /** Ends the stream (the service reconnects later, with a new token). */
  close(): void;
  /** Aborted when the service disconnects or the stream is closed: stop upstream work with it. */
  readonly signal: AbortSignal;
  readonly closed: boolean;
}

export interface EventStreamOptions {
  /** Seconds between heartbeats: the capability's `heartbeatInterval`. */
  heartbeatIntervalSeconds: number;
  /** Checks every data event before it is written (the SDK's development-mode schema check). */
  check?: (data: unknown) => void;
}

/**
 * Answers `res` as an SSE stream: the headers the service and conformance
 * require, a heartbeat at once (so conformance sees one within the interval)
 * and then every interval, until the client disconnects or `close()`.
 */
export function openEventStream<D = Record<string, unknown>>(res: ServerResponse, options: EventStreamOptions): EventStream<D> {
  const controller = new AbortController();
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    // Proxies (nginx) buffer responses unless told not to; a buffered stream looks silent, then stale.
    'x-accel-buffering': 'no',
  });
  res.flushHeaders();
  const write = (event: string, data: unknown) => {
    if (!controller.signal.aborted) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const heartbeat = () => write('heartbeat', { ts: new Date().toISOString() });
  const timer = setInterval(heartbeat, options.heartbeatIntervalSeconds * 1000);
  const stop = () => {
    if (controller.signal.aborted) return;
    clearInterval(timer);
    controller.abort();
  };
  // The service going away (or its watchdog dropping a silent stream) shows as the response closing; the
  // request's own 'close' is no signal, as Node emits it once a bodiless GET has been read.
  res.once('close', stop);
  heartbeat();
  return {
    send(data: D) {
      if (controller.signal.aborted) return;
      options.check?.(data);
      write('data', data);
    },
    close() {
      stop();
      if (!res.writableEnded) res.end();
    },
    get signal() {
      return controller.signal;
    },
    get closed() {
      return controller.signal.aborted;
    },
  };
}
