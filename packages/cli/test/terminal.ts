import { PassThrough } from 'node:stream';
import type { Io } from '@soul-service/cli';

export interface Terminal {
  io: Io;
  stdout: () => string;
  stderr: () => string;
  stdin: PassThrough & { isTTY?: boolean };
  /** Ctrl-C: aborts `io.signal`, which ends a command that runs until stopped. */
  abort: () => void;
}

/** In-memory streams for `run(argv, io)`; `tty` makes stdin a terminal (prompts allowed), as a person's shell is. */
export function terminal(env: Record<string, string | undefined>, tty = false): Terminal {
  let out = '';
  let err = '';
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  if (tty) stdin.isTTY = true;
  const controller = new AbortController();
  return {
    io: {
      stdout: { write: (t: string) => (out += t) },
      stderr: { write: (t: string) => (err += t) },
      stdin,
      env,
      signal: controller.signal,
    },
    stdout: () => out,
    stderr: () => err,
    stdin,
    abort: () => controller.abort(),
  };
}
