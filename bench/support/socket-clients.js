#!/usr/bin/env node
/**
 * Gateway WebSocket clients in their own process (started with `fork` by
 * bench/sockets.bench.ts), so thousands of sockets never share an event loop
 * or a descriptor table with the bench or the api. Commands arrive over IPC,
 * one at a time, each answered with one message:
 *
 *   { cmd: 'open', base, tokens, perToken, count, batch }
 *       opens `count` sockets to `<base>/v1/gateway?token=…`, `batch` at a
 *       time, socket i with tokens[floor(i / perToken)], each waited for
 *       until its `ready` frame → { opened, failed, errors, ms }
 *   { cmd: 'ping', seconds, graceMs }
 *       every open socket sends one `ping` frame, spread evenly over
 *       `seconds`; latency is the frame sent → its `pong` read
 *       → { sent, latencies, slow (answered in ≥ 50 ms: { atS, ms }), missing, open, closes }
 *   { cmd: 'status' } → { open, closes }
 *   { cmd: 'close' }  terminates every socket → { closed }, then exits
 */
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- plain node script */
const { performance } = require('node:perf_hooks');
const { clearTimeout, setTimeout } = require('node:timers');
const WebSocket = require('ws');

/** @type {Array<{ ws: WebSocket, ready: boolean, pongs: Map<string, (at: number) => void> }>} */
const sockets = [];
/** Close codes seen after `ready`, with how many. */
const closes = {};

function openOne(base, token) {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${base.replace(/^http/, 'ws')}/v1/gateway?token=${encodeURIComponent(token)}`, { perMessageDeflate: false });
    const socket = { ws, ready: false, pongs: new Map() };
    ws.on('message', (raw) => {
      const at = performance.now();
      const frame = JSON.parse(raw.toString());
      if (frame.type === 'ready' && !socket.ready) {
        socket.ready = true;
        sockets.push(socket);
        resolve({ ok: true });
      } else if (frame.type === 'pong' && frame.id) {
        socket.pongs.get(frame.id)?.(at);
        socket.pongs.delete(frame.id);
      }
    });
    ws.on('error', (error) => {
      if (!socket.ready) resolve({ ok: false, error: error.message });
    });
    ws.on('close', (code, reason) => {
      if (!socket.ready) return resolve({ ok: false, error: `closed ${code} ${reason.toString()}` });
      closes[code] = (closes[code] ?? 0) + 1;
    });
  });
}

const openCount = () => sockets.filter((s) => s.ws.readyState === WebSocket.OPEN).length;

async function open({ base, tokens, perToken, count, batch }) {
  const started = performance.now();
  let opened = 0;
  const errors = {};
  for (let from = 0; from < count; from += batch) {
    const results = await Promise.all(
      Array.from({ length: Math.min(batch, count - from) }, (_, k) => openOne(base, tokens[Math.floor((from + k) / perToken)])),
    );
    for (const result of results) {
      if (result.ok) opened += 1;
      else errors[result.error] = (errors[result.error] ?? 0) + 1;
    }
  }
  return { opened, failed: count - opened, errors, ms: Math.round(performance.now() - started) };
}

async function ping({ seconds, graceMs }) {
  const live = sockets.filter((s) => s.ws.readyState === WebSocket.OPEN);
  const started = performance.now();
  const latencies = [];
  let missing = 0;
  /** Pings answered in 50 ms or more, with when they were sent (seconds into the window). */
  const slow = [];
  const pending = [];
  for (let i = 0; i < live.length; i += 1) {
    const due = started + (i * seconds * 1000) / live.length;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const socket = live[i];
    if (socket.ws.readyState !== WebSocket.OPEN) {
      missing += 1;
      continue;
    }
    const id = `hb${i}`;
    pending.push(
      new Promise((resolve) => {
        const timer = setTimeout(() => {
          socket.pongs.delete(id);
          missing += 1;
          resolve();
        }, graceMs);
        const sent = performance.now();
        socket.pongs.set(id, (at) => {
          clearTimeout(timer);
          latencies.push(at - sent);
          if (at - sent >= 50) slow.push({ atS: Number(((sent - started) / 1000).toFixed(2)), ms: Number((at - sent).toFixed(1)) });
          resolve();
        });
        socket.ws.send(JSON.stringify({ type: 'ping', id }));
      }),
    );
  }
  await Promise.all(pending);
  return { sent: live.length, latencies, slow, missing, open: openCount(), closes };
}

process.on('message', (message) => {
  const reply = (value) => process.send(value);
  const fail = (error) => process.send({ error: error.message });
  switch (message.cmd) {
    case 'open':
      return void open(message).then(reply, fail);
    case 'ping':
      return void ping(message).then(reply, fail);
    case 'status':
      return reply({ open: openCount(), closes });
    case 'close': {
      for (const socket of sockets) socket.ws.terminate();
      return process.send({ closed: sockets.length }, () => process.exit(0));
    }
    default:
      return reply({ error: `unknown command ${JSON.stringify(message.cmd)}` });
  }
});
process.send({ started: true });
