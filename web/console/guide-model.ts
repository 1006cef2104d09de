/**
 * The console's guidance as plain functions (no page, no session): the lifecycle checklist of a version, the
 * "call it" commands and the links and counts the package page shows. guide.tsx renders them.
 */

/** What the checklist reads of a version (`VersionDto`); structural, so this file needs no browser types. */
export interface VersionState {
  version: string;
  state: string;
}

/** What the checklist reads of a conformance run (`ConformanceRunDto`). */
export interface RunState {
  full: boolean;
  status?: string;
  passed: boolean | null;
  score: number | null;
  error?: string | null;
}

export type StepState = 'done' | 'current' | 'failed' | 'running' | 'waiting' | 'todo';

export interface Step {
  label: string;
  state: StepState;
  detail: string;
}

const AFTER_SUBMIT = ['in_review', 'approved', 'published', 'superseded'];
const AFTER_APPROVAL = ['approved', 'published', 'superseded'];

function runStep(label: string, run: RunState | undefined, what: string): Omit<Step, 'state'> & { state: StepState | null } {
  if (!run) return { label, state: null, detail: `${what} has not run yet.` };
  if (run.status === 'queued' || run.status === 'running') return { label, state: 'running', detail: `${what} is ${run.status}…` };
  if (run.status === 'failed') return { label, state: 'failed', detail: `${what} could not finish: ${run.error ?? 'unknown error'}` };
  if (run.passed) return { label, state: 'done', detail: `Passed with ${run.score ?? '?'}/100.` };
  return { label, state: 'failed', detail: `Scored ${run.score ?? '?'}/100: fix the findings in the report and run it again.` };
}

/** The lifecycle of one version: create, quick validation, full conformance, submit, review, publish. */
export function lifecycleSteps(version: VersionState, runs: RunState[]): Step[] {
  const submitted = AFTER_SUBMIT.includes(version.state);
  const quick = runStep(
    'Validate (quick)',
    runs.find((r) => !r.full),
    'Quick validation',
  );
  const full = runStep(
    'Validate fully (conformance)',
    runs.find((r) => r.full),
    'The full run',
  );
  const steps: Array<Omit<Step, 'state'> & { state: StepState | null }> = [
    { label: 'Create the version', state: 'done', detail: `Version ${version.version} exists.` },
    // A passed full run (or a submission, which judged one) covers the quick validation's dimensions too.
    quick.state !== 'done' && (submitted || full.state === 'done')
      ? { ...quick, state: 'done', detail: submitted ? 'Covered by the full run of the submission.' : 'Covered by the passed full run.' }
      : quick,
    submitted && full.state !== 'done' ? { ...full, state: 'done', detail: 'Judged at submission.' } : full,
    {
      label: 'Submit for review',
      state: submitted ? 'done' : null,
      detail: submitted ? 'Submitted.' : 'Needs a score of at least 80 with no dimension below 5.',
    },
    {
      label: 'Review',
      state: AFTER_APPROVAL.includes(version.state) ? 'done' : version.state === 'in_review' ? 'waiting' : null,
      detail: AFTER_APPROVAL.includes(version.state)
        ? 'Approved.'
        : version.state === 'in_review'
          ? 'Waiting for the operator’s review: nothing to do meanwhile.'
          : 'Low-risk packages are approved automatically; others wait for an operator.',
    },
    {
      label: 'Publish to the catalog',
      state: version.state === 'published' || version.state === 'superseded' ? 'done' : null,
      detail:
        version.state === 'published'
          ? 'Published: users can install it.'
          : version.state === 'superseded'
            ? 'Published, then superseded.'
            : '',
    },
  ];
  // The first step not done is the current one (unless it is running, failed or waiting); the rest are to do.
  let reached = false;
  return steps.map((step): Step => {
    if (step.state === 'done' && !reached) return { ...step, state: 'done' };
    if (reached) return { ...step, state: 'todo' };
    reached = true;
    return { ...step, state: step.state && step.state !== 'done' ? step.state : 'current' };
  });
}

/** Shell quoting for one argument. */
export function quote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export interface CapabilityForCall {
  name: string;
  type: string;
  params: Record<string, unknown>;
}

export function capabilitiesForCalls(capabilities: object[]): CapabilityForCall[] {
  return capabilities
    .map((c) => c as { name?: unknown; type?: unknown; examples?: unknown })
    .filter((c) => typeof c.name === 'string' && typeof c.type === 'string' && c.type !== 'webhook')
    .map((c) => {
      const first = Array.isArray(c.examples) ? (c.examples[0] as { params?: unknown; input?: unknown } | undefined) : undefined;
      const example = first?.params ?? first?.input;
      return {
        name: c.name as string,
        type: c.type as string,
        params: example && typeof example === 'object' && !Array.isArray(example) ? (example as Record<string, unknown>) : {},
      };
    });
}

/** The two commands: an app token (client credentials) and one capability's execution through the platform. */
export function callCommands(options: { origin: string; clientId: string; packageId: string; capability: CapabilityForCall }): {
  token: string;
  execute: string;
} {
  const { origin, clientId, packageId, capability } = options;
  const token = [
    `export CLIENT_ID=${quote(clientId)}`,
    `export CLIENT_SECRET='<your client secret>'`,
    `APP_TOKEN=$(curl -sS -X POST ${quote(`${origin}/v1/auth/token`)} \\`,
    `  -u "$CLIENT_ID:$CLIENT_SECRET" \\`,
    `  -d grant_type=client_credentials -d scope=capabilities:execute | jq -r .access_token)`,
  ].join('\n');
  // An action takes `input` (and waits for the user's confirmation); state and history take `params`.
  const body = {
    installId: '<install id from the install.created webhook>',
    [capability.type === 'action' ? 'input' : 'params']: capability.params,
  };
  const execute = [
    `curl -sS -X POST ${quote(`${origin}/v1/providers/packages/${packageId}/capabilities/${encodeURIComponent(capability.name)}/execute`)} \\`,
    `  -H "Authorization: Bearer $APP_TOKEN" \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d ${quote(JSON.stringify(body))}`,
  ].join('\n');
  return { token, execute };
}

/** The package's listing in the user app (web/app route `/marketplace/:slug`), instead of the JSON catalog URL. */
export function listingHref(slug: string): string {
  return `/app/marketplace/${encodeURIComponent(slug)}`;
}

/** Active installs (the package detail's `installCount`, read through a narrow type until the client is regenerated). */
export function installCountOf(pkg: object): number | null {
  const count = (pkg as { installCount?: unknown }).installCount;
  return typeof count === 'number' ? count : null;
}
