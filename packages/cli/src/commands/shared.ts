import { readFileSync } from 'node:fs';
import { ok, type Schemas } from '@soul-service/api-client';
import { CommandError, UsageError, type CommandContext, type OptionSpec } from '../command';

export const PACKAGE_OPTION: OptionSpec = { type: 'string', value: '<pkg_id>', description: 'The package (default $SOUL_PACKAGE_ID)' };
export const APP_OPTION: OptionSpec = {
  type: 'string',
  value: '<app_id>',
  description: 'The app (default $SOUL_APP_ID, else the only app the token sees)',
};

/** `--package`, else `SOUL_PACKAGE_ID` (a CI job works on one package). */
export function packageId(context: CommandContext): string {
  const id = context.options.package ?? context.io.env.SOUL_PACKAGE_ID;
  if (typeof id !== 'string' || id === '') throw new UsageError('Which package? Pass --package <pkg_id> or set SOUL_PACKAGE_ID.');
  return id;
}

/** `--app`, else `SOUL_APP_ID`, else the token's only app (an app token sees its own; a developer with one app). */
export async function appId(context: CommandContext): Promise<string> {
  const given = context.options.app ?? context.io.env.SOUL_APP_ID;
  if (typeof given === 'string' && given !== '') return given;
  const { apps } = await ok(context.api().GET('/v1/providers/apps'));
  if (apps.length === 1) return apps[0].id;
  throw new UsageError(
    apps.length === 0 ? 'This account has no app yet.' : 'Which app? Pass --app <app_id> or set SOUL_APP_ID.',
    apps.length === 0 ? 'Register one in the console first.' : `Apps: ${apps.map((a) => `${a.id} (${a.name})`).join(', ')}`,
  );
}

/** A local JSON file (a package descriptor), with errors that name the file. */
export function readJsonFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new CommandError('file_unreadable', `Cannot read ${path}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CommandError('invalid_json', `${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new CommandError('invalid_json', `${path} must hold a JSON object`);
  return value as Record<string, unknown>;
}

type Version = Schemas['VersionDto'];

/** A version of the package by id (`ver_…`) or number (`1.2.0`); without a selector, the newest. */
export function chooseVersion(pkg: Schemas['PackageDto'], selector: string | undefined): Version {
  const versions = pkg.versions ?? [];
  const chosen = selector
    ? versions.find((v) => v.id === selector || v.version === selector)
    : (versions.find((v) => v.id === pkg.latestVersionId) ?? versions[versions.length - 1]);
  if (!chosen) {
    throw new UsageError(
      selector ? `Package ${pkg.id} has no version ${selector}.` : `Package ${pkg.id} has no version yet.`,
      `Versions: ${versions.map((v) => `${v.version} (${v.id}, ${v.state})`).join(', ') || 'none'}`,
    );
  }
  return chosen;
}

/**
 * An http(s) URL given with `option` (`--url`, `--forward-to`): a usage error that names the option when it is
 * missing, not a URL, another scheme or carries credentials. `base`: the URL paths are appended to, so no query or
 * fragment, and without a trailing slash.
 */
export function httpUrlOption(value: unknown, option: string, example: string, options: { base?: boolean } = {}): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`${option} is needed`, `For example ${option} ${example}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${option} ${JSON.stringify(value)} is not a URL`, `For example ${option} ${example}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${option} must be http or https, not ${url.protocol}`);
  if (url.username || url.password) throw new UsageError(`${option} must not carry credentials`);
  if (!options.base) return url.toString();
  // Each call's path is appended to it: a query or fragment would swallow the path.
  if (url.search || url.hash) throw new UsageError(`${option} is the runtime’s base URL, without a query or fragment`);
  return url.toString().replace(/\/+$/, '');
}
