#!/usr/bin/env node
// A fixed entry for the `soul` command: npm links bins at install time, before this workspace is built,
// so the link must point at a file that exists then. The command itself is the compiled dist/bin.js.
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- plain node entry */
try {
  require.resolve('../dist/bin.js');
} catch {
  process.stderr.write('soul: not built yet; run `npm run build:packages` (or `npm run build` in packages/cli) first\n');
  process.exit(1);
}
require('../dist/bin.js');
