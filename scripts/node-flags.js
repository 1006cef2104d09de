#!/usr/bin/env node
/**
 * The V8 flags the service's processes run with, in one place: `npm start`'s
 * command in package.json. The other ways of starting a role (`start:api`,
 * `start:worker`, the image's `CMD`) must pass the same, and the test harness
 * reads them from here to run `dist/` as operators do (test/support/harness.ts,
 * `SpawnedRole`). docs/decisions.md, "V8's young generation".
 *   node scripts/node-flags.js           prints the flags
 *   node scripts/node-flags.js --check   fails when a way of starting a role passes others
 */
/* eslint-disable @typescript-eslint/no-require-imports -- plain node script */
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');

/** The flags between `node` and the entry script of a command line, as a list. */
function flagsOf(command, entry) {
  const match = new RegExp(`\\bnode((?:\\s+--[\\w-]+(?:=\\S+)?)*)\\s+${entry.replace('.', '\\.')}`).exec(command);
  return match ? match[1].trim().split(/\s+/).filter(Boolean) : undefined;
}

/** The V8 flags of the service's processes (from `npm start`). */
function serviceNodeFlags() {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  return flagsOf(scripts.start, 'dist/main.js') ?? [];
}

function check() {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const want = JSON.stringify(serviceNodeFlags());
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(readFileSync(join(ROOT, 'docker/Dockerfile'), 'utf8'));
  const image = cmd ? JSON.parse(cmd[1]).join(' ') : '';
  const ways = [
    ['package.json start:api', flagsOf(scripts['start:api'], 'dist/main.js')],
    ['package.json start:worker', flagsOf(scripts['start:worker'], 'dist/worker.js')],
    ['docker/Dockerfile CMD', flagsOf(image, 'dist/main.js')],
  ];
  const wrong = ways.filter(([, flags]) => JSON.stringify(flags) !== want);
  for (const [where, flags] of wrong) console.error(`${where} passes ${JSON.stringify(flags ?? null)}; npm start passes ${want}`);
  if (wrong.length > 0) process.exit(1);
}

if (require.main === module) {
  if (process.argv.includes('--check')) check();
  else console.log(serviceNodeFlags().join(' '));
}

module.exports = { serviceNodeFlags };
