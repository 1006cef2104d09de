import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { buildSync } from 'esbuild';

const ROOT = join(__dirname, '..', '..');

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The `soul` CLI bundled from its sources into one file under tmp/ (the test does not depend on a build), and
 * run as a subprocess: stdin is not a terminal, so it never prompts and answers JSON.
 */
export function bundleSoulCli(name: string): string {
  const outfile = join(ROOT, 'tmp', `${name}.js`);
  buildSync({
    entryPoints: [join(ROOT, 'packages', 'cli', 'src', 'bin.ts')],
    bundle: true,
    platform: 'node',
    target: 'node20',
    outfile,
    tsconfig: join(ROOT, 'tsconfig.json'),
    logLevel: 'error',
  });
  return outfile;
}

/** Starts `soul …` (the bundle) in `cwd` with only PATH, the test CA and `env`. */
export function startSoul(
  bundle: string,
  args: string[],
  options: { cwd: string; env: Record<string, string | undefined> },
): { child: ChildProcess; done: Promise<Finished>; stdout: () => string } {
  const child = spawn(process.execPath, [bundle, ...args], {
    cwd: options.cwd,
    env: {
      PATH: process.env.PATH,
      NODE_EXTRA_CA_CERTS: resolve(ROOT, process.env.NODE_EXTRA_CA_CERTS ?? 'tmp/test-ca/ca.pem'),
      // The bundle is one file: tell `init` where the templates are.
      SOUL_TEMPLATES_DIR: join(ROOT, 'packages', 'cli', 'templates'),
      ...options.env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<Finished>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { child, done, stdout: () => stdout };
}

/** The JSON a command printed on success (read field by field with toMatchObject); its stderr in the error otherwise. */
export function jsonOf(finished: Finished) {
  if (finished.code !== 0) throw new Error(`soul exited ${finished.code}: ${finished.stderr}\n${finished.stdout}`);
  return JSON.parse(finished.stdout);
}
