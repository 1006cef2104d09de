#!/usr/bin/env node
/**
 * The "Project layout" tree of README.md, made from src/ as it is, so the
 * README cannot drift from the code (issue 17: "the layout section shows the
 * real tree"). Each folder is a line: its files, then its plain sub-folders
 * (`dto/`, `entities/`, `migrations/`) by name; other sub-folders get lines of
 * their own. A folder with no files of its own shows its description instead.
 *
 *   node scripts/project-layout.js           rewrite the block in README.md
 *   node scripts/project-layout.js --check   exit 1 when README.md's block differs (npm run lint)
 */
/* eslint-disable @typescript-eslint/no-require-imports -- plain node script */
const { readdirSync, readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');
const README = join(ROOT, 'README.md');
/** Where the file names start on a line, and how long a line may grow. */
const COLUMN = 24;
const WIDTH = 150;
/** Folders named, not expanded: their contents follow from their name. */
const PLAIN = new Set(['dto', 'entities', 'migrations']);
/** What a folder without files of its own holds. */
const DESCRIPTIONS = {
  'src/infra': 'database, queue, redis, realtime bus, mail, logging and metrics plumbing (never imports modules/)',
  'src/modules': 'one folder per area (below)',
};
const START = '## Project layout\n\n```\n';
const END = '```\n';

/** The lines of one folder and, below it, of its expanded sub-folders. */
function folderLines(path, depth) {
  const entries = readdirSync(join(ROOT, path), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  const files = entries.filter((e) => e.isFile()).map((e) => e.name);
  const folders = entries.filter((e) => e.isDirectory()).map((e) => e.name);
  const items = [...files, ...folders.filter((f) => PLAIN.has(f)).map((f) => `${f}/`)];
  const name = `${' '.repeat(depth * 2)}${path.split('/').pop()}/`;
  const lines = items.length > 0 ? wrap(name, items) : [`${name.padEnd(COLUMN)}${DESCRIPTIONS[path] ?? ''}`.trimEnd()];
  for (const folder of folders.filter((f) => !PLAIN.has(f))) lines.push(...folderLines(`${path}/${folder}`, depth + 1));
  return lines;
}

/** `name` then the items, two spaces apart, continued under the first item when a line is full. */
function wrap(name, items) {
  const lines = [];
  let line = name.padEnd(COLUMN);
  let first = true;
  for (const item of items) {
    if (!first && line.length + 2 + item.length > WIDTH) {
      lines.push(line);
      line = ' '.repeat(COLUMN);
      first = true;
    }
    line += first ? item : `  ${item}`;
    first = false;
  }
  lines.push(line);
  return lines;
}

function layout() {
  return `${folderLines('src', 0).join('\n')}\n`;
}

function main() {
  const readme = readFileSync(README, 'utf8');
  const start = readme.indexOf(START);
  if (start < 0) throw new Error(`README.md has no "${START.trim()}" block`);
  const from = start + START.length;
  const to = readme.indexOf(END, from);
  const current = readme.slice(from, to);
  const wanted = layout();
  if (process.argv.includes('--check')) {
    if (current !== wanted) {
      console.error('README.md: the "Project layout" tree differs from src/; run `node scripts/project-layout.js` to rewrite it');
      process.exit(1);
    }
    console.log('README.md: the project layout matches src/');
    return;
  }
  writeFileSync(README, readme.slice(0, from) + wanted + readme.slice(to));
  console.log(current === wanted ? 'README.md: the project layout was already current' : 'README.md: project layout rewritten');
}

main();
