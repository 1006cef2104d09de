#!/usr/bin/env node
/**
 * Throughput of the service against a baseline measured in the same run, so the
 * numbers are ratios that survive a change of machine:
 *
 *   baseline  a bare Fastify server answering the same JSON (framework floor)
 *   service   the compiled api role (dist/main.js) on a fresh database
 *
 * Each target gets the same autocannon load (connections, duration). Results go
 * to bench/results/<timestamp>.json and a table on stdout. Needs PostgreSQL and
 * Redis like the service itself. Usage: npm run bench [-- --duration 10 --connections 50]
 */
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- plain node script */
const { spawn } = require('node:child_process');
const { mkdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const autocannon = require('autocannon');
const Fastify = require('fastify');

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const DURATION = option('duration', 8);
const CONNECTIONS = option('connections', 50);
const ROOT = join(__dirname, '..');

function load(url, headers = {}) {
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers }, (error, result) =>
      error ? reject(error) : resolve(result),
    );
  });
}

async function startBaseline() {
  const app = Fastify({ logger: false });
  app.get('/health/live', async () => ({ status: 'ok' }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${app.server.address().port}` };
}

function startService() {
  const database = `svc_bench_${Date.now()}`;
  const child = spawn(process.execPath, [join(ROOT, 'dist/main.js')], {
    env: {
      ...process.env,
      APP_ROLE: 'api',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${database}`,
      REDIS_PREFIX: database,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk) => {
      output += chunk.toString();
      const match = /api listening on http:\/\/[^:]+:(\d+)/.exec(output);
      if (match) resolve({ child, database, url: `http://127.0.0.1:${match[1]}` });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`service exited (${code}) before listening:\n${output}`)));
  });
}

function summary(result) {
  return {
    requestsPerSecond: Math.round(result.requests.average),
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    transportErrors: result.errors,
    non2xx: result.non2xx,
  };
}

async function main() {
  const baseline = await startBaseline();
  const service = await startService().catch(async (error) => {
    await baseline.app.close();
    throw error;
  });
  try {
    const rows = {};
    rows['baseline GET /health/live'] = summary(await load(`${baseline.url}/health/live`));
    rows['service GET /health/live'] = summary(await load(`${service.url}/health/live`));
    rows['service GET /.well-known/jwks.json'] = summary(await load(`${service.url}/.well-known/jwks.json`));
    rows['service GET /v1/nothing (404 envelope)'] = summary(await load(`${service.url}/v1/nothing`));
    const base = rows['baseline GET /health/live'].requestsPerSecond;
    for (const row of Object.values(rows)) row.ratioToBaseline = Number((row.requestsPerSecond / base).toFixed(3));
    console.table(rows);
    mkdirSync(join(__dirname, 'results'), { recursive: true });
    const file = join(__dirname, 'results', `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify({ duration: DURATION, connections: CONNECTIONS, node: process.version, rows }, null, 2));
    console.log(`written ${file}`);
  } finally {
    service.child.kill('SIGTERM');
    await baseline.app.close();
    const { Client } = require('pg');
    const client = new Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
    await client.connect();
    await new Promise((r) => service.child.once('exit', r));
    await client.query(`DROP DATABASE IF EXISTS ${service.database} WITH (FORCE)`);
    await client.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
