import type { ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../test/support/free-port';
import type { SpawnedRole, TestEnvironment } from '../../test/support/harness';
import { PROFILES_DIR } from './profile';

/** Where a role profiled as `name` writes its CPU profile (when it exits). */
export const profileFile = (name: string): string => join(PROFILES_DIR, `${name}.cpuprofile`);

/** Node arguments that CPU-profile a spawned role as `name`; an older profile of that name is removed first. */
export function profileArgs(enabled: boolean, name: string): string[] {
  if (!enabled) return [];
  mkdirSync(PROFILES_DIR, { recursive: true });
  rmSync(profileFile(name), { force: true });
  return ['--cpu-prof', `--cpu-prof-dir=${PROFILES_DIR}`, `--cpu-prof-name=${name}.cpuprofile`];
}

/** The api role as operators run it (`dist/main.js`, its own process) on a free port, once `/health/ready` answers. */
export async function spawnApi(
  env: TestEnvironment,
  what: string,
  profile: { enabled: boolean; name: string },
): Promise<{ role: SpawnedRole; url: string }> {
  const port = await freePort();
  const role = env.spawnRole(
    'main',
    { APP_ROLE: 'api', PORT: String(port), LOG_LEVEL: 'warn' },
    profileArgs(profile.enabled, profile.name),
  );
  const url = `http://127.0.0.1:${port}`;
  await whenReady(role, url, what);
  return { role, url };
}

/** Waits until `<url>/health/ready` answers 200, or fails with the role's output. */
export async function whenReady(role: SpawnedRole, url: string, what: string): Promise<void> {
  for (const deadline = Date.now() + 60_000; ;) {
    if (role.child.exitCode !== null) throw new Error(`${what} exited (${role.child.exitCode}):\n${role.output.slice(-3000)}`);
    if ((await fetch(`${url}/health/ready`).catch(() => null))?.status === 200) return;
    if (Date.now() > deadline) throw new Error(`${what} was not ready in 60 s:\n${role.output.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** SIGTERM, then waits for the exit (a role writes its `--cpu-prof` file on the way out); SIGKILL after `timeoutMs`. */
export async function stopGracefully(child: ChildProcess, what: string, timeoutMs = 30_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
  if ((await Promise.race([exited, late])) === 'late') {
    console.warn(`${what} did not exit ${timeoutMs} ms after SIGTERM; killing it`);
    child.kill('SIGKILL');
    await exited;
  }
  clearTimeout(timer);
}
