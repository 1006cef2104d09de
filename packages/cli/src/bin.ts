#!/usr/bin/env node
import { run } from './cli';

/** `soul`: the process's streams and environment, and Ctrl-C as an abort that lets a running command end cleanly. */
const interrupt = new AbortController();
process.once('SIGINT', () => interrupt.abort());
process.once('SIGTERM', () => interrupt.abort());

run(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  signal: interrupt.signal,
})
  .then((code) => {
    process.exitCode = code;
  })
  .catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  })
  // Nothing should keep the process alive after the command (an idle keep-alive socket, stdin).
  .finally(() => setImmediate(() => process.exit()));
