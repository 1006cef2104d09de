#!/usr/bin/env node
/**
 * Baseline of the webhook benchmark: the service's own envelope, signing and
 * HTTPS sender (from dist/), in a plain loop with a fixed number of requests
 * in flight: no outbox, no queue, no database. Runs in its own process, like
 * the worker it is compared with. Reads one JSON argument
 * `{ count, concurrency, targets: [{ url, appId, secret }], idPrefix }` and
 * prints `{ count, seconds, perSecond, latencies: { p50, p99, max }, failures, cpuSeconds }`.
 */
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- plain node script */
require('reflect-metadata');
const { join } = require('node:path');
const { performance } = require('node:perf_hooks');
const { URL } = require('node:url');
const dist = (path) => require(join(__dirname, '..', '..', 'dist', path));
const { sendWebhook } = dist('modules/webhooks/webhook-sender');
const { OutboundHttp } = dist('common/http/outbound-http');
const { signatureHeaders } = dist('modules/webhooks/webhook-signature');
const { envelope } = dist('modules/webhooks/webhook-deliveries.service');
const { USER_AGENT } = dist('modules/webhooks/delivery-attempts');

const { count, concurrency, targets, idPrefix } = JSON.parse(process.argv[2]);
/** The service's outbound client, loopback allowed (the receiver is local), as the worker runs in the benchmark. */
const http = new OutboundHttp({ allowPrivateTargets: true });

async function main() {
  const latencies = [];
  let failures = 0;
  let next = 0;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const target = targets[i % targets.length];
        const eventId = `${idPrefix}${String(i).padStart(12, '0')}`;
        const { body } = envelope({
          eventId,
          type: 'capability.invoked',
          createdAt: new Date(),
          appId: target.appId,
          data: {
            capability_name: 'balance',
            mode: 'state',
            user_id: 'usr_bench',
            install_id: 'inst_bench',
            request_id: `req_b${i}`,
            duration_ms: 12,
            status: 'ok',
          },
        });
        const timestamp = Math.floor(Date.now() / 1000);
        const headers = {
          'User-Agent': USER_AGENT,
          'X-Service-Event-Id': eventId,
          'X-Service-Event-Type': 'capability.invoked',
          'X-Service-Delivery-Id': `dlv_${eventId}`,
          'X-Service-Delivery-Attempt': '1',
          'X-Service-Timestamp': String(timestamp),
          ...signatureHeaders({ current: target.secret, previous: null }, eventId, timestamp, body),
        };
        const sent = performance.now();
        const result = await sendWebhook(new URL(target.url), headers, body, 5000, http);
        latencies.push(performance.now() - sent);
        if (result.status !== 200) failures += 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  const at = (p) => Number(latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)].toFixed(2));
  process.stdout.write(
    JSON.stringify({
      count,
      seconds,
      perSecond: count / seconds,
      latencies: { p50: at(50), p99: at(99), max: at(100) },
      failures,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
    }),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
