#!/usr/bin/env node
/**
 * autocannon in its own process, so the load generator never shares an event
 * loop with the server it measures. Reads one JSON argument
 * `{ url, connections, duration, headers }` and prints a JSON summary.
 */
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- plain node script */
const autocannon = require('autocannon');

const options = JSON.parse(process.argv[2]);
autocannon({ ...options, headers: options.headers ?? {} }, (error, result) => {
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
    }),
  );
});
