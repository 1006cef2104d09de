#!/usr/bin/env node
/**
 * autocannon in its own process, so the load generator never shares an event
 * loop with the server it measures. Reads one JSON argument
 * `{ url, connections, duration, headers, method?, bodies?, idempotencyKeys? }`
 * and prints a JSON summary. `bodies` (strings) are sent in turn, one per
 * request; `idempotencyKeys: true` gives every request a fresh random
 * `Idempotency-Key` header. The summary includes the CPU this process used
 * over the run (`cpuMs`).
 */
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- plain node script */
const { randomBytes } = require('node:crypto');
const autocannon = require('autocannon');

const { bodies, idempotencyKeys, ...options } = JSON.parse(process.argv[2]);
const headers = options.headers ?? {};

/** Per-request body and key: a `setupRequest` that autocannon calls before building each request. */
let sent = 0;
const requests =
  bodies?.length || idempotencyKeys
    ? [
        {
          setupRequest: (request) => {
            const i = sent++;
            return {
              ...request,
              ...(bodies?.length ? { body: bodies[i % bodies.length] } : {}),
              headers: {
                ...request.headers,
                ...(idempotencyKeys ? { 'idempotency-key': `bench-${randomBytes(12).toString('hex')}-${i}` } : {}),
              },
            };
          },
        },
      ]
    : undefined;

const cpuBefore = process.cpuUsage();
autocannon({ ...options, headers, ...(requests ? { requests } : {}) }, (error, result) => {
  const cpu = process.cpuUsage(cpuBefore);
  if (error) {
    console.error(error);
    process.exit(1);
  }
  const statuses = {};
  for (const [code, count] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = count.count;
  process.stdout.write(
    JSON.stringify({
      requestsPerSecond: result.requests.average,
      total: result.requests.total,
      latency: {
        p50: result.latency.p50,
        p90: result.latency.p90,
        p99: result.latency.p99,
        max: result.latency.max,
        mean: result.latency.mean,
      },
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      statuses,
      // The load generator's own CPU over the run (user + system, ms): what the bench can say of the core it took.
      cpuMs: (cpu.user + cpu.system) / 1000,
    }),
  );
});
