#!/usr/bin/env node
/**
 * Builds the web pages (web/app → /app, web/console → /console) into dist/web
 * with esbuild: one hashed script and one hashed stylesheet per page family,
 * and its index.html pointing at them. Runs after `nest build` (which empties
 * dist) as part of `npm run build`. Usage: node scripts/build-web.js [--dev]
 */
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- plain node script */
const { mkdirSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { basename, join, relative } = require('node:path');
const esbuild = require('esbuild');

const ROOT = join(__dirname, '..');
const OUT = join(ROOT, 'dist', 'web');
const PAGES = ['app', 'console'];
const dev = process.argv.includes('--dev');

async function buildPage(name) {
  const outdir = join(OUT, name, 'assets');
  const result = await esbuild.build({
    entryPoints: { [name]: join(ROOT, 'web', name, 'main.tsx') },
    bundle: true,
    outdir,
    entryNames: '[name]-[hash]',
    // Code behind a dynamic import (the Firebase SDK, only when Firebase sign-in is configured) goes in its own chunk.
    splitting: true,
    chunkNames: 'chunk-[name]-[hash]',
    format: 'esm',
    target: ['es2022', 'chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: !dev,
    sourcemap: true,
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const entryPoint = relative(ROOT, join(ROOT, 'web', name, 'main.tsx'))
    .split('\\')
    .join('/');
  const entry = Object.entries(result.metafile.outputs).find(([, output]) => output.entryPoint === entryPoint);
  if (!entry) throw new Error(`esbuild produced no entry output for ${name}`);
  const [scriptPath, output] = entry;
  const script = basename(scriptPath);
  const style = output.cssBundle ? basename(output.cssBundle) : null;
  const template = readFileSync(join(ROOT, 'web', name, 'index.html'), 'utf8');
  const html = template
    .replace('<!-- style -->', style ? `<link rel="stylesheet" href="/${name}/assets/${style}" />` : '')
    .replace('<!-- script -->', `<script type="module" src="/${name}/assets/${script}"></script>`);
  writeFileSync(join(OUT, name, 'index.html'), html);
  const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
  const entryBytes = output.bytes + (output.cssBundle ? result.metafile.outputs[output.cssBundle].bytes : 0);
  console.log(
    `web: ${relative(ROOT, join(OUT, name))} (first load ${Math.round(entryBytes / 1024)} KiB; ${Math.round(bytes / 1024)} KiB in all with lazy chunks and source maps)`,
  );
}

async function main() {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  for (const name of PAGES) await buildPage(name);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
