import type { ChildProcess } from 'node:child_process';
import type { SpawnedRole } from '../../test/support/harness';
import { PROFILES_DIR } from './profile';

/** Node arguments that CPU-profile a spawned role into PROFILES_DIR as `<name>.cpuprofile` (written when it exits). */
export function profileArgs(enabled: boolean, name: string): string[] {
  return enabled ? ['--cpu-prof', `--cpu-prof-dir=${PROFILES_DIR}`, `--cpu-prof-name=${name}.cpuprofile`] : [];
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
