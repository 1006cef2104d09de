import { ok, type Schemas } from '@soul-service/api-client';
import {
  assertDescriptorRequest,
  DescriptorError,
  normaliseCapabilities,
  RULES_VERSION,
  staticVerdict,
  type Verdict,
} from '@soul-service/rules';
import { CommandError, UsageError, type Command, type CommandContext } from '../command';
import { DEFAULT_DESCRIPTOR, PLACEHOLDER_APP_ID } from './packages';
import { chooseVersion, PACKAGE_OPTION, packageId, readJsonFile } from './shared';

type ServerResult = Schemas['LocalValidationResultDto'];

/** What `validate` reports: the local verdict, and the service's for the same descriptors when asked. */
export interface ValidateReport {
  file: string;
  local: Verdict;
  server?: { versionId: string; verdict: Omit<ServerResult, 'id'>; runId: string; same: boolean; sameRules: boolean };
}

/** A package file (the create-package body) names the package; a version file does not. */
function kindOf(descriptor: Record<string, unknown>): 'package' | 'version' {
  return ['name', 'slug', 'riskTier', 'appId'].some((key) => key in descriptor) ? 'package' : 'version';
}

/**
 * The verdict the service's quick validation gives (schema, contracts, documentation), computed here with
 * the same code (@soul-service/rules): a descriptor the contract refuses is a CommandError listing every
 * field at fault, as the service's 400 would.
 */
export function localVerdict(descriptor: Record<string, unknown>, riskTier: string): Verdict {
  const kind = kindOf(descriptor);
  // `packages create` fills in the app (--app, SOUL_APP_ID or the token's only app): a file without one is complete.
  const checked = kind === 'package' && descriptor.appId === undefined ? { ...descriptor, appId: PLACEHOLDER_APP_ID } : descriptor;
  try {
    assertDescriptorRequest(kind, checked);
    return staticVerdict({ riskTier, capabilities: normaliseCapabilities(descriptor.capabilities) });
  } catch (error) {
    if (!(error instanceof DescriptorError)) throw error;
    const faults = error.errors ?? [{ field: error.field, message: error.detail, code: error.code }];
    throw new CommandError(error.code, error.detail, faults);
  }
}

/** Scores and findings only: ids and where a run is stored differ by nature. */
function sameVerdict(local: Verdict, server: Omit<ServerResult, 'id'>): boolean {
  const strip = (v: { score: number; passed: boolean; dimensions: unknown }) => JSON.stringify([v.score, v.passed, v.dimensions]);
  return strip(local) === strip(server);
}

export function dimensionLines(verdict: Verdict): string[] {
  return Object.entries(verdict.dimensions).map(([name, dimension]) => {
    const failed = dimension.checks.filter((check) => !check.passed && !check.warning && check.max > 0);
    const status = dimension.ran === false ? 'not run offline' : `${dimension.score}/${dimension.max}`;
    return [`  ${name.padEnd(14)} ${status}`, ...failed.map((check) => `    ✗ ${check.id}: ${check.detail}`)].join('\n');
  });
}

/** The service's quick validation of the same descriptors, as a draft of the package's version (nothing is stored but the run). */
async function askService(context: CommandContext, descriptor: Record<string, unknown>) {
  const api = context.api();
  const id = packageId(context);
  const pkg = await ok(api.GET('/v1/providers/packages/{package_id}', { params: { path: { package_id: id } } }));
  const version = chooseVersion(pkg, context.options['version-id'] as string | undefined);
  const { id: runId, ...verdict } = await ok(
    api.POST('/v1/providers/packages/{package_id}/versions/{version_id}/validate', {
      params: { path: { package_id: pkg.id, version_id: version.id } },
      body: { capabilities: descriptor.capabilities } as never,
    }),
  );
  return { riskTier: pkg.riskTier, versionId: version.id, runId, verdict: verdict as Omit<ServerResult, 'id'> };
}

export const validate: Command = {
  name: 'validate',
  summary: 'Check a local descriptor offline with the service’s own rules; with --package, also ask the service and compare',
  args: '[descriptor.json]',
  maxArgs: 1,
  options: {
    package: PACKAGE_OPTION,
    'version-id': { type: 'string', value: '<ver_…|x.y.z>', description: 'The version to validate against (default: the newest)' },
    'risk-tier': {
      type: 'string',
      value: '<tier>',
      description: 'The package’s risk tier, for a version file that names none (default: the file’s riskTier, or the package’s)',
    },
  },
  examples: [`soul validate ${DEFAULT_DESCRIPTOR}`, `soul validate ${DEFAULT_DESCRIPTOR} --package pkg_123 --json`],
  async run(context) {
    const file = context.args[0] ?? DEFAULT_DESCRIPTOR;
    const descriptor = readJsonFile(file);
    const remote = Boolean(context.options.package ?? context.io.env.SOUL_PACKAGE_ID);
    const riskTier =
      (context.options['risk-tier'] as string | undefined) ?? (typeof descriptor.riskTier === 'string' ? descriptor.riskTier : undefined);
    if (!riskTier && !remote) {
      throw new UsageError(`${file} names no riskTier.`, 'Pass --risk-tier <tier>, or --package <pkg_id> to use the package’s.');
    }
    let report: ValidateReport;
    if (remote) {
      // The local verdict is refused before the service is asked; the service judges a draft with the package's tier.
      if (riskTier) localVerdict(descriptor, riskTier);
      const asked = await askService(context, descriptor);
      const local = localVerdict(descriptor, asked.riskTier);
      report = {
        file,
        local,
        server: {
          versionId: asked.versionId,
          verdict: asked.verdict,
          runId: asked.runId,
          same: sameVerdict(local, asked.verdict),
          sameRules: asked.verdict.rulesVersion === local.rulesVersion,
        },
      };
    } else {
      report = { file, local: localVerdict(descriptor, riskTier!) };
    }
    const { local, server } = report;
    const lines = [
      `${file}: ${local.passed ? 'passes' : 'does not pass'} the checks a local run can judge, score ${local.score} (rules ${RULES_VERSION})`,
      ...dimensionLines(local),
    ];
    if (server) {
      lines.push(
        server.same
          ? `The service gives the same verdict for version ${server.versionId} (run ${server.runId}).`
          : `The service's verdict differs for version ${server.versionId}: score ${String(server.verdict.score)}, ${server.verdict.passed ? 'passed' : 'not passed'} (run ${server.runId}).`,
      );
      if (!server.sameRules) {
        lines.push(
          `The service judges with rules ${String(server.verdict.rulesVersion)}, this CLI with ${local.rulesVersion}: update the CLI (npm i -g @soul-service/cli) for the same verdict.`,
        );
      }
    } else {
      lines.push('Live checks (runtime, performance, security) need the runtime: soul submit runs them on the service.');
    }
    context.out.result(report, lines);
    if (!local.passed || (server && !server.verdict.passed)) {
      throw new CommandError(
        'validation_failed',
        `${file} does not pass: score ${local.score}, or a dimension under its floor (see above).`,
      );
    }
  },
};
