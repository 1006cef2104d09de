// Example runtime for a `realtime` capability: `ticker`, a live exchange rate (docs/examples/realtime/package.json).
//
// The service opens `GET /capabilities/ticker/stream` with `Accept: text/event-stream` while someone looks at the
// capability, and relays what you send. Answer 200 with `Content-Type: text/event-stream` and `Cache-Control: no-cache`,
// then send `event: data` lines (JSON matching responseSchema) and `event: heartbeat` lines (`{"ts": …}`) at least every
// `heartbeatInterval` seconds: after twice that without an event the service counts the stream as stale and reconnects,
// each time with a new runtime token. Run it with:
//
//   SERVICE_URL=https://api.example.com APP_ID=app_… TLS_CERT=cert.pem TLS_KEY=key.pem node runtime.mjs
import { setInterval, clearInterval } from 'node:timers';
import { capabilityDescriptor, startRuntime } from '../shared/runtime.mjs';

const ticker = capabilityDescriptor(import.meta.url, 'ticker');
const HEARTBEAT_MS = ticker.heartbeatInterval * 1000;
/** How often a new rate is sent. */
const TICK_MS = 1000;

// Stands in for your market data feed: one rate for every listener, moving a little each tick.
let liveRate = 1.0842;
setInterval(() => {
  liveRate = Number((liveRate + (Math.random() - 0.5) * 0.001).toFixed(4));
}, TICK_MS).unref();

await startRuntime({
  capabilities: {
    ticker: {
      mode: 'realtime',
      // The runtime token was verified before this is called; it is checked when the stream opens only, so an
      // open stream may outlive the token's 5 minutes.
      stream({ res, live }) {
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
        const send = (event, data) => {
          if (!res.writableEnded) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
        };
        // A heartbeat at once, so a fresh connection is never silent, then one per interval.
        send('heartbeat', { ts: new Date().toISOString() });
        // Test traffic (`livemode: false`) gets the fixture rate; live streams follow the feed.
        send('data', { pair: 'EURUSD', rate: live ? liveRate : 1.0842 });
        const data = setInterval(() => send('data', { pair: 'EURUSD', rate: live ? liveRate : 1.0842 }), TICK_MS);
        const heartbeat = setInterval(() => send('heartbeat', { ts: new Date().toISOString() }), HEARTBEAT_MS);
        // The service closes the connection when nobody looks any more (or to reconnect): stop sending then.
        res.on('close', () => {
          clearInterval(data);
          clearInterval(heartbeat);
        });
      },
    },
  },
});
