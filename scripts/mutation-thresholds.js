#!/usr/bin/env node
/**
 * Fails when any mutated file scores under the threshold (StrykerJS's own
 * `break` threshold judges the total only). Reads the JSON report of the last
 * `stryker run` (mutation-testing-report-schema) and prints one line per file.
 * Score = (killed + timeout) / (all valid mutants), as Stryker computes it:
 * mutants that do not compile (CompileError) or were ignored do not count.
 * When every file passes and the report covers every file under `mutate` as it
 * is now (a full run, not `--mutate <file>`), records the mutation fingerprint
 * (scripts/mutation-fingerprint.js) that lets `.ci/run` skip an unchanged tier.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- plain node script */
const { readFileSync } = require('node:fs');
const fingerprint = require('./mutation-fingerprint');
const { join } = require('node:path');

const THRESHOLD = Number(process.env.MUTATION_THRESHOLD ?? 80);
const report = JSON.parse(readFileSync(join(__dirname, '..', 'reports', 'mutation', 'mutation.json'), 'utf8'));

let failed = false;
for (const [file, { mutants }] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
  const counted = mutants.filter((m) => !['CompileError', 'RuntimeError', 'Ignored'].includes(m.status));
  const detected = counted.filter((m) => m.status === 'Killed' || m.status === 'Timeout').length;
  const score = counted.length === 0 ? 100 : (100 * detected) / counted.length;
  const verdict = score >= THRESHOLD ? 'ok' : 'UNDER';
  if (score < THRESHOLD) failed = true;
  console.log(
    `${verdict.padEnd(5)} ${score.toFixed(1).padStart(5)} %  ${String(detected).padStart(4)}/${String(counted.length).padEnd(4)} ${file}`,
  );
}
console.log(`threshold ${THRESHOLD} % per file; report: reports/mutation/index.html`);

if (!failed && THRESHOLD >= 80) {
  const mutated = JSON.parse(readFileSync(join(__dirname, '..', 'stryker.config.json'), 'utf8')).mutate;
  const stale = mutated.filter((file) => report.files[file]?.source !== readFileSync(join(__dirname, '..', file), 'utf8'));
  if (stale.length === 0) fingerprint.write();
  else console.log(`mutation fingerprint not written: the report does not cover these files as they are now: ${stale.join(', ')}`);
}
process.exit(failed ? 1 : 0);
