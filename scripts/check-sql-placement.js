#!/usr/bin/env node
/**
 * `npm run lint:sql`: SQL lives only in repositories. Fails when a file under
 * src/ other than a `*.repository.ts`, a migration or the database layer's own
 * tooling (src/infra/database/: the data source, migrations runner, listener)
 * runs a query, builds one, or injects a TypeORM entity repository. Services,
 * guards, caches, processors and controllers ask a repository instead.
 */
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- plain node script */
const { readdirSync, readFileSync, statSync } = require('node:fs');
const { join, relative } = require('node:path');

const ROOT = join(__dirname, '..');
const SRC = join(ROOT, 'src');
const FORBIDDEN = [
  { pattern: /\.query\s*[<(]/, what: 'runs SQL (.query)' },
  { pattern: /createQueryBuilder\s*\(/, what: 'builds a query (createQueryBuilder)' },
  { pattern: /@InjectRepository\s*\(/, what: 'injects a TypeORM entity repository' },
  { pattern: /\bgetRepository\s*\(/, what: 'reaches for a TypeORM entity repository' },
];

const allowed = (file) => file.endsWith('.repository.ts') || file.startsWith('src/infra/database/') || file.includes('/migrations/');

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (name.endsWith('.ts')) yield path;
  }
}

const problems = [];
for (const path of files(SRC)) {
  const file = relative(ROOT, path);
  if (allowed(file)) continue;
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (/^\s*(\/\/|\*)/.test(line)) return; // comments may name the methods
      for (const { pattern, what } of FORBIDDEN) if (pattern.test(line)) problems.push(`${file}:${i + 1} ${what}: ${line.trim()}`);
    });
}

if (problems.length > 0) {
  console.error(`SQL outside a repository (${problems.length}); move it into the owning <table>.repository.ts:\n${problems.join('\n')}`);
  process.exit(1);
}
console.log('lint:sql: every query is in a repository');
