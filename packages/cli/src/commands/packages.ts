import { ok, type Schemas } from '@soul-service/api-client';
import { UsageError, type Command, type CommandContext } from '../command';
import { APP_OPTION, appId, chooseVersion, PACKAGE_OPTION, packageId, readJsonFile } from './shared';

/** The descriptor file a command reads when none is named. */
export const DEFAULT_DESCRIPTOR = 'soul-package.json';
/** The docs' and templates' stand-in for the app id, which `packages create` replaces with the app. */
export const PLACEHOLDER_APP_ID = 'app_your_app_id';

type Package = Schemas['PackageDto'];
type Version = Schemas['VersionDto'];
type CreatePackage = Schemas['CreatePackageDto'];
type CreateVersion = Schemas['CreateVersionDto'];

/** `--runtime-url`: where this deployment's runtime answers, over the file's `runtimeUrl` (one file, several environments). */
const RUNTIME_URL_OPTION = {
  type: 'string',
  value: '<https://…>',
  description: 'The runtime’s public HTTPS address (default: the file’s "runtimeUrl")',
} as const;

function withRuntimeUrl(descriptor: Record<string, unknown>, context: CommandContext): Record<string, unknown> {
  const given = context.options['runtime-url'];
  return typeof given === 'string' ? { ...descriptor, runtimeUrl: given } : descriptor;
}

/** The fields of a package descriptor that make a version (`#/$defs/version` of the descriptor schema). */
const VERSION_FIELDS = ['$schema', 'version', 'capabilities', 'runtimeUrl'];

/**
 * The body of a new version from a local descriptor: a version file as it is, or the version's part of a
 * package file (the one `packages create` sends), so one file serves both. `--version-number` overrides.
 */
export function versionBody(descriptor: Record<string, unknown>, number: string | undefined): CreateVersion {
  const body = Object.fromEntries(Object.entries(descriptor).filter(([key]) => VERSION_FIELDS.includes(key)));
  if (number) body.version = number;
  if (typeof body.version !== 'string') {
    throw new UsageError('The descriptor names no version number.', 'Add "version": "1.1.0" to the file, or pass --version-number 1.1.0.');
  }
  return body as unknown as CreateVersion;
}

function versionLine(v: Version): string {
  return `  ${v.version.padEnd(9)} ${v.state.padEnd(11)} ${v.id}${v.reviewReason ? `  (${v.reviewReason})` : ''}`;
}

function withoutVersions(pkg: Package): Omit<Package, 'versions'> {
  const { versions: _versions, ...rest } = pkg;
  return rest;
}

async function readPackage(context: CommandContext, id: string): Promise<Package> {
  return ok(context.api().GET('/v1/providers/packages/{package_id}', { params: { path: { package_id: id } } }));
}

export const packagesCreate: Command = {
  name: 'packages create',
  summary: 'Create a package and its first version from a local descriptor',
  args: '[descriptor.json]',
  maxArgs: 1,
  options: { app: APP_OPTION, 'runtime-url': RUNTIME_URL_OPTION },
  examples: [
    `soul packages create ${DEFAULT_DESCRIPTOR} --app app_123`,
    'soul packages create --runtime-url https://runtime.acme.example --json',
  ],
  async run(context) {
    const file = context.args[0] ?? DEFAULT_DESCRIPTOR;
    const descriptor = withRuntimeUrl(readJsonFile(file), context);
    // The examples carry a placeholder app id: the app given (or the token's only one) takes its place.
    const given = context.options.app ?? context.io.env.SOUL_APP_ID;
    if (given || typeof descriptor.appId !== 'string' || !/^app_/.test(descriptor.appId) || descriptor.appId === PLACEHOLDER_APP_ID) {
      descriptor.appId = await appId(context);
    }
    const pkg = await ok(context.api().POST('/v1/providers/packages', { body: descriptor as unknown as CreatePackage }));
    context.out.result(pkg, [
      `Created package ${pkg.name} (${pkg.id}), slug ${pkg.slug}.`,
      ...(pkg.versions ?? []).map(versionLine),
      `Next: soul submit --package ${pkg.id}`,
    ]);
  },
};

export const packagesList: Command = {
  name: 'packages list',
  summary: 'List the packages the token can see',
  async run(context) {
    const { packages } = await ok(context.api().GET('/v1/providers/packages'));
    context.out.result(
      { packages },
      packages.length === 0
        ? 'No packages yet: soul packages create'
        : packages.map((p) => `${p.id}  ${p.slug.padEnd(24)} ${p.status.padEnd(9)} published ${p.publishedVersionId ?? '-'}`),
    );
  },
};

export const push: Command = {
  name: 'push',
  summary: 'Create a new version of a package from a local descriptor',
  args: '[descriptor.json]',
  maxArgs: 1,
  options: {
    package: PACKAGE_OPTION,
    'version-number': { type: 'string', value: '<x.y.z>', description: 'The version\'s number (default: the file\'s "version")' },
    'runtime-url': RUNTIME_URL_OPTION,
  },
  examples: [`soul push ${DEFAULT_DESCRIPTOR} --package pkg_123`, 'soul push --package pkg_123 --version-number 1.2.0'],
  async run(context) {
    const id = packageId(context);
    const file = context.args[0] ?? DEFAULT_DESCRIPTOR;
    const number = context.options['version-number'];
    const body = versionBody(withRuntimeUrl(readJsonFile(file), context), typeof number === 'string' ? number : undefined);
    const version = await ok(
      context.api().POST('/v1/providers/packages/{package_id}/versions', { params: { path: { package_id: id } }, body }),
    );
    context.out.result(version, [
      `Pushed ${version.version} of ${id} as ${version.id} (${version.state}).`,
      `Next: soul submit --package ${id}`,
    ]);
  },
};

const VERSION_SELECTOR = { type: 'string', value: '<ver_id|x.y.z>', description: 'The version (default: the newest)' } as const;

export const submit: Command = {
  name: 'submit',
  summary: 'Submit a version: the service runs the full conformance suite and enforces the gate',
  options: { package: PACKAGE_OPTION, 'version-id': VERSION_SELECTOR },
  examples: ['soul submit --package pkg_123', 'soul submit --package pkg_123 --version-id 1.2.0'],
  async run(context) {
    const id = packageId(context);
    const version = chooseVersion(await readPackage(context, id), context.options['version-id'] as string | undefined);
    const submission = await ok(
      context.api().POST('/v1/providers/packages/manage/{package_id}/versions/{version_id}/submit', {
        params: { path: { package_id: id, version_id: version.id } },
      }),
    );
    const run = submission.conformance;
    context.out.result(submission, [
      `Submitted ${submission.version.version} (${submission.version.id}): ${submission.version.state}, ${submission.review} review.`,
      `Conformance ${run.id}: score ${run.score ?? '-'}, ${run.passed ? 'passed' : 'not passed'}.`,
      submission.review === 'manual' ? 'An operator reviews it; then: soul publish' : `Next: soul publish --package ${id}`,
    ]);
  },
};

export const publish: Command = {
  name: 'publish',
  summary: 'Publish an approved (or automatically listed) version to the catalog',
  options: { package: PACKAGE_OPTION, 'version-id': VERSION_SELECTOR },
  examples: ['soul publish --package pkg_123'],
  async run(context) {
    const id = packageId(context);
    const version = chooseVersion(await readPackage(context, id), context.options['version-id'] as string | undefined);
    const published = await ok(
      context.api().POST('/v1/providers/packages/manage/{package_id}/versions/{version_id}/publish', {
        params: { path: { package_id: id, version_id: version.id } },
      }),
    );
    context.out.result(published, [`Published ${published.version.version} of ${published.slug}: ${published.catalogUrl}`]);
  },
};

export const status: Command = {
  name: 'status',
  summary: 'Show a package, its versions and the latest conformance result',
  options: { package: PACKAGE_OPTION },
  examples: ['soul status --package pkg_123', 'soul status --package pkg_123 --json'],
  async run(context) {
    const pkg = await readPackage(context, packageId(context));
    const versions = pkg.versions ?? [];
    const latest = versions.find((v) => v.id === pkg.latestVersionId) ?? versions[versions.length - 1];
    const runs = latest
      ? await ok(context.api().GET('/v1/providers/conformance', { params: { query: { version_id: latest.id, limit: 1 } } }))
      : null;
    const conformance = runs?.data[0] ?? null;
    context.out.result({ package: withoutVersions(pkg), versions, conformance }, [
      `${pkg.name} (${pkg.id}), slug ${pkg.slug}: ${pkg.status}, published version ${pkg.publishedVersionId ?? 'none'}`,
      'Versions:',
      ...versions.map(versionLine),
      conformance
        ? `Latest conformance (${latest?.version}): ${conformance.status}, score ${conformance.score ?? '-'}, ${
            conformance.passed === null ? 'no verdict yet' : conformance.passed ? 'passed' : 'not passed'
          }${conformance.full ? ' (full run)' : ' (local checks)'}`
        : 'No conformance run yet: soul submit runs one.',
    ]);
  },
};
