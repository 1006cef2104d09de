#!/usr/bin/env node
/**
 * Fingerprint of what the mutation tier judged: every file under `mutate` in
 * stryker.config.json, every file of the unit tests (test/unit/, which judge
 * the mutants), stryker.config.json and the Jest config Stryker runs.
 * `test/mutation-fingerprint.json` maps each to its sha256 as of the last
 * passing `npm run test:mutation`, which writes it (through
 * scripts/mutation-thresholds.js). `.ci/run` runs the mutation tier only when
 * `--check` finds a difference.
 *
 *   node scripts/mutation-fingerprint.js --check   exit 1 and name the files that differ
 *   node scripts/mutation-fingerprint.js --write   record the current files
 */
/* eslint-disable @typescript-eslint/no-require-imports -- plain node script */
const { createHash } = require('node:crypto');
const { existsSync, readdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join, relative, sep } = require('node:path');

const ROOT = join(__dirname, '..');
const FINGERPRINT = join(ROOT, 'test', 'mutation-fingerprint.json');
const CONFIG = 'stryker.config.json';
const TESTS = join('test', 'unit');

const posix = (path) => path.split(sep).join('/');

function filesUnder(dir) {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** The paths the fingerprint covers, relative to the repository root, sorted. */
function coveredFiles() {
  const config = JSON.parse(readFileSync(join(ROOT, CONFIG), 'utf8'));
  const mutated = config.mutate ?? [];
  if (mutated.some((pattern) => /[*?{}[\]!]/.test(pattern))) {
    throw new Error(`${CONFIG}: list the mutated files one by one (no globs), so the fingerprint can name them`);
  }
  const jestConfig = config.jest?.configFile ? [config.jest.configFile] : [];
  return [
    ...new Set([CONFIG, ...jestConfig, ...mutated, ...filesUnder(TESTS)].map((path) => posix(relative(ROOT, join(ROOT, path))))),
  ].sort();
}

function current() {
  const files = {};
  for (const path of coveredFiles()) {
    files[path] = existsSync(join(ROOT, path))
      ? createHash('sha256')
          .update(readFileSync(join(ROOT, path)))
          .digest('hex')
      : 'missing';
  }
  return files;
}

function write() {
  const files = current();
  const document = {
    _comment:
      'sha256 of the mutated files and the unit tests as of the last passing npm run test:mutation; written by scripts/mutation-fingerprint.js --write, checked by .ci/run',
    files,
  };
  writeFileSync(FINGERPRINT, `${JSON.stringify(document, null, 2)}\n`);
  console.log(`mutation fingerprint: ${Object.keys(files).length} files recorded in ${posix(relative(ROOT, FINGERPRINT))}`);
}

/** The paths that differ from the recorded fingerprint (changed, added or removed). */
function differences() {
  if (!existsSync(FINGERPRINT)) return [`${posix(relative(ROOT, FINGERPRINT))} (missing)`];
  const recorded = JSON.parse(readFileSync(FINGERPRINT, 'utf8')).files ?? {};
  const now = current();
  const changed = [];
  for (const path of new Set([...Object.keys(recorded), ...Object.keys(now)])) {
    if (!(path in recorded)) changed.push(`${path} (new)`);
    else if (!(path in now)) changed.push(`${path} (no longer covered)`);
    else if (recorded[path] !== now[path]) changed.push(`${path} (changed)`);
  }
  return changed.sort();
}

function check() {
  const changed = differences();
  if (changed.length === 0) {
    console.log('mutation fingerprint: the mutated files and their unit tests are as of the last passing mutation run');
    return 0;
  }
  console.log(`mutation fingerprint: ${changed.length} file(s) differ from the last passing mutation run:`);
  for (const line of changed) console.log(`  ${line}`);
  return 1;
}

module.exports = { coveredFiles, current, differences, write };

if (require.main === module) {
  const mode = process.argv[2];
  if (mode === '--write') write();
  else if (mode === '--check') process.exitCode = check();
  else {
    console.error('usage: node scripts/mutation-fingerprint.js --check | --write');
    process.exitCode = 2;
  }
}
