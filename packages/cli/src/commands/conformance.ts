import {
  DIMENSIONS,
  NOT_JUDGED_LOCALLY,
  normaliseCapabilities,
  runConformance,
  RULES_VERSION,
  type HttpPort,
  type RuntimeRequest,
  type Verdict,
} from '@soul-service/rules';
import { CommandError, UsageError, type Command, type CommandContext } from '../command';
import { LocalKey } from '../local-key';
import { DEFAULT_DESCRIPTOR } from './packages';
import { httpUrlOption, readJsonFile } from './shared';
import { dimensionLines, localVerdict } from './validate';

/** The app id a runtime made by `soul init` answers as when SOUL_APP_ID is not set. */
export const LOCAL_APP_ID = 'app_local';
/** Where the webhook signing secret comes from: never a command-line argument, which `ps` shows to everyone. */
const WEBHOOK_SECRET_ENV = 'SOUL_WEBHOOK_SECRET';

/** What `conformance` reports. */
export interface ConformanceReport {
  file: string;
  url: string;
  app_id: string;
  rules_version: string;
  verdict: Verdict;
  /** Checks a local run does not score, and why (the service judges them when the version is submitted). */
  not_judged_locally: Array<{ id: string; why: string }>;
  jwks_path: string;
  /** What to do when the runtime refused every token of the run (it was not started with the local key). */
  hint?: string;
}

/**
 * The developer's own machine calls the developer's own runtime: no address policy (the service's refusal of
 * private addresses protects the service's network, not this one), normal TLS verification (a self-signed
 * localhost certificate needs NODE_EXTRA_CA_CERTS, or use http://localhost), and no redirects, as the service.
 */
const localHttp: HttpPort = {
  fetch: (url: string, init: RuntimeRequest) => fetch(url, { ...init, redirect: 'manual' }),
  assertCallable: async (url: string, field: string) => httpUrlOption(url, field, 'http://localhost:8787'),
};

function notJudged(verdict: Verdict): Array<{ id: string; why: string }> {
  return DIMENSIONS.flatMap((name) =>
    verdict.dimensions[name].checks
      .filter((check) => check.detail.endsWith(NOT_JUDGED_LOCALLY))
      .map((check) => ({ id: check.id, why: NOT_JUDGED_LOCALLY })),
  );
}

/** The runtime answered the run's valid calls with 401: it does not trust the local key (the usual set-up slip). */
function refusedTheTokens(verdict: Verdict): boolean {
  const execute = verdict.dimensions.contracts.checks.find((check) => check.id === 'contracts.execute');
  return execute !== undefined && !execute.passed && /answered 401/.test(execute.detail);
}

export const conformance: Command = {
  name: 'conformance',
  summary: 'Run the full conformance suite (all six dimensions, the service’s own runner) against a runtime on this machine',
  args: '[descriptor.json]',
  maxArgs: 1,
  options: {
    url: { type: 'string', value: '<url>', description: 'The runtime’s base URL, for example http://localhost:8787' },
    app: {
      type: 'string',
      value: '<app_id>',
      description: `The runtime’s app id, the tokens’ audience (default $SOUL_APP_ID, else ${LOCAL_APP_ID})`,
    },
    'webhook-url': {
      type: 'string',
      value: '<url>',
      description: `Also probe this webhook receiver’s signature checking, with the secret in $${WEBHOOK_SECRET_ENV}`,
    },
    'risk-tier': { type: 'string', value: '<tier>', description: 'The package’s risk tier, for a file that names none' },
    'print-jwks-path': {
      type: 'boolean',
      description: 'Print only the path of the local key set to start the runtime with (SOUL_LOCAL_JWKS), and exit',
    },
  },
  examples: [
    'SOUL_LOCAL_JWKS=$(soul conformance --print-jwks-path) npm start   # in one terminal',
    `soul conformance ${DEFAULT_DESCRIPTOR} --url http://localhost:8787`,
  ],
  async run(context: CommandContext) {
    const { key, jwksPath } = await LocalKey.load(context.io.env);
    if (context.options['print-jwks-path']) {
      // A bare value in every mode, for `$(…)` in a shell, CI included.
      context.io.stdout.write(`${jwksPath}\n`);
      return;
    }
    const given = context.options.url;
    if (typeof given !== 'string' || given === '') {
      throw new UsageError('conformance needs --url, the runtime to call', `soul conformance --url http://localhost:8787`);
    }
    const runtimeUrl = httpUrlOption(given, '--url', 'http://localhost:8787', { base: true });
    const file = context.args[0] ?? DEFAULT_DESCRIPTOR;
    const descriptor = readJsonFile(file);
    const riskTier =
      (context.options['risk-tier'] as string | undefined) ?? (typeof descriptor.riskTier === 'string' ? descriptor.riskTier : undefined);
    if (!riskTier) throw new UsageError(`${file} names no riskTier.`, 'Pass --risk-tier <tier>.');
    // A descriptor the contract refuses is reported field by field, as `validate` does, before any call.
    localVerdict(descriptor, riskTier);
    const appId = (context.options.app as string | undefined) || context.io.env.SOUL_APP_ID || LOCAL_APP_ID;
    if (!/^app_\w+$/.test(appId)) throw new UsageError(`--app ${JSON.stringify(appId)} is not an app id (app_…)`);
    let webhook: { url: string; secret: string } | undefined;
    if (typeof context.options['webhook-url'] === 'string') {
      const secret = context.io.env[WEBHOOK_SECRET_ENV];
      if (!secret) throw new UsageError(`--webhook-url needs the receiver's signing secret in $${WEBHOOK_SECRET_ENV}`);
      webhook = { url: httpUrlOption(context.options['webhook-url'], '--webhook-url', 'http://localhost:8787/webhooks'), secret };
    }
    context.out.note(`Running the conformance suite (rules ${RULES_VERSION}) against ${runtimeUrl} as ${appId} …`);
    const verdict = await runConformance(
      { runtimeUrl, riskTier, capabilities: normaliseCapabilities(descriptor.capabilities), full: true, appId, webhook, localRun: true },
      { http: localHttp, tokens: key },
    );
    const hint = refusedTheTokens(verdict)
      ? `The runtime refused the run's tokens. Start it with SOUL_LOCAL_JWKS=${jwksPath} and SOUL_APP_ID=${appId} (outside production), so it trusts this CLI's local key for test traffic.`
      : undefined;
    const report: ConformanceReport = {
      file,
      url: runtimeUrl,
      app_id: appId,
      rules_version: verdict.rulesVersion,
      verdict,
      not_judged_locally: notJudged(verdict),
      jwks_path: jwksPath,
      ...(hint ? { hint } : {}),
    };
    const lines = [
      `${runtimeUrl}: ${verdict.passed ? 'passes' : 'does not pass'} the full conformance suite, score ${verdict.score} (rules ${RULES_VERSION})`,
      ...dimensionLines(verdict),
      ...report.not_judged_locally.map((item) => `  – ${item.id}: ${item.why}`),
    ];
    if (hint) lines.push(hint);
    context.out.result(report, lines);
    if (!verdict.passed) {
      throw new CommandError(
        'conformance_failed',
        `${runtimeUrl} does not pass: score ${verdict.score}, or a dimension under its floor (see above).`,
      );
    }
  },
};
